package console

// SetMaxAccountFails sets the sign-in failures allowed per e-mail address
// from all addresses and returns a function that restores the old value.
func SetMaxAccountFails(n int) (restore func()) {
	old := maxAccountFails
	maxAccountFails = n
	return func() { maxAccountFails = old }
}
