package cluster

import "hash/fnv"

// JumpHash is Lamping & Veach's jump consistent hash ("A Fast, Minimal Memory,
// Consistent Hash Algorithm", 2014): it maps key to a bucket in [0, buckets)
// so that growing buckets from n to n+1 moves only about 1/(n+1) of the keys,
// all of them to the new bucket. buckets < 1 is treated as 1.
func JumpHash(key uint64, buckets int) int {
	var b, j int64 = -1, 0
	for j < int64(buckets) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	if b < 0 {
		return 0
	}
	return int(b)
}

// TenantGroup returns the data group (1..groups) holding a tenant (an org or
// a room): 1 + JumpHash(FNV-1a 64 of the tenant ID, groups). It needs no
// table, so every node computes it alone; groups is fixed at cluster creation.
func TenantGroup(tenantID string, groups int) uint32 {
	h := fnv.New64a()
	h.Write([]byte(tenantID)) // never fails
	return uint32(1 + JumpHash(h.Sum64(), groups))
}
