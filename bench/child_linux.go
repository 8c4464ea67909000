package bench

import (
	"os/exec"
	"runtime"
	"syscall"
)

// startChild starts cmd so that it gets SIGTERM when this process dies, a
// kill -9 or a closed terminal included: a bench killed that way left its
// throw-away server running on its ports, data dir and all. The death signal
// follows the thread that started the child, so that thread stays one the
// runtime keeps (locked only for the start, never exited).
func startChild(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return cmd.Start()
}
