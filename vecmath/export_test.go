package vecmath

// FanoutForTest runs tasks on GOMAXPROCS goroutines, as raftfsm does, for
// the external benchmarks.
var FanoutForTest = fanout
