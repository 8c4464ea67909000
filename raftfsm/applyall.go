package raftfsm

// ApplyAll applies the commands of one log entry (a group commit's
// envelope) in order and returns their results, what Apply returns for
// each one by one. Runs of single writes into one tenant are applied as one
// batch: their gates then run side by side on every core (pregate) instead
// of each spreading its scan over the cores in turn. A batch's items give
// the results and state the item-by-item path gives (writeBatch), so the
// run's commands get the results they would have got one by one.
func (f *FSM) ApplyAll(_ uint64, cmds [][]byte) []any {
	out := make([]any, len(cmds))
	decoded := make([]any, len(cmds))
	for i, b := range cmds {
		decoded[i] = decodeCommand(b)
	}
	for i := 0; i < len(decoded); {
		n := f.mergeable(decoded[i:])
		if n < 2 {
			out[i] = f.apply(decoded[i])
			i++
			continue
		}
		run := decoded[i : i+n]
		merged := &WriteCmd{Tenant: run[0].(*WriteCmd).Tenant, Items: make([]WriteItem, n)}
		for k, c := range run {
			merged.Items[k] = c.(*WriteCmd).Items[0]
		}
		res := f.apply(merged).(*WriteResults)
		for k := range run {
			if res.Err != nil { // mergeable rules out every command-wide error
				out[i+k] = &WriteResults{Err: res.Err}
				continue
			}
			out[i+k] = &WriteResults{Results: res.Results[k : k+1 : k+1]}
		}
		i += n
	}
	return out
}

// mergeable returns how many commands from the first form a run ApplyAll
// may apply as one batch: single-item writes into the first's tenant
// without an idempotency key, a supersede or a secret, of the group's
// dimension, each within its atom limit even if every write before it in
// the run stores an atom. Those have no outcome but their item's, which a
// batch gives alike.
func (f *FSM) mergeable(cmds []any) int {
	first, ok := cmds[0].(*WriteCmd)
	if !ok {
		return 0
	}
	count := -1 // the tenant's atoms, read once a limit asks
	n := 0
	for _, c := range cmds {
		w, ok := c.(*WriteCmd)
		if !ok || w.Tenant != first.Tenant || w.Idem != nil || len(w.Items) != 1 {
			break
		}
		it := &w.Items[0]
		if it.Type == Secret || len(it.Supersedes) > 0 || len(it.Vector) != f.dim {
			break
		}
		if w.Limit > 0 {
			if count < 0 {
				count = 0
				if t := f.tenants[w.Tenant]; t != nil {
					count = t.atomCount()
				}
			}
			if int64(count+n+1) > w.Limit {
				break
			}
		}
		n++
	}
	return n
}
