package pack

// maxCells bounds the dynamic-programming table of one knapsack (items ×
// capacity cells); larger problems are solved on costs scaled down, which
// stays feasible (costs round up, the capacity rounds down).
const maxCells = 1 << 21

// knapsack returns, in increasing order, indexes of items whose costs add
// up to at most capacity with the largest total value (0/1 knapsack by
// dynamic programming over the capacity). Items cost at least 1.
func knapsack(costs []int, values []float64, capacity int) []int {
	n := len(costs)
	if n == 0 || capacity <= 0 {
		return nil
	}
	total := 0
	for _, c := range costs {
		total += c
	}
	if total <= capacity {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return all
	}
	scale := 1
	if n*(capacity+1) > maxCells {
		cols := maxCells / n
		if cols < 2 {
			cols = 2
		}
		scale = (capacity + cols - 2) / (cols - 1)
	}
	limit := capacity / scale
	w := make([]int, n)
	for i, c := range costs {
		w[i] = (c + scale - 1) / scale
	}
	best := make([]float64, limit+1)
	take := make([]bool, n*(limit+1))
	for i := 0; i < n; i++ {
		row := take[i*(limit+1) : (i+1)*(limit+1)]
		for c := limit; c >= w[i]; c-- {
			if v := best[c-w[i]] + values[i]; v > best[c] {
				best[c] = v
				row[c] = true
			}
		}
	}
	var picked []int
	c := limit
	for i := n - 1; i >= 0; i-- {
		if take[i*(limit+1)+c] {
			picked = append(picked, i)
			c -= w[i]
		}
	}
	for l, r := 0, len(picked)-1; l < r; l, r = l+1, r-1 {
		picked[l], picked[r] = picked[r], picked[l]
	}
	return picked
}
