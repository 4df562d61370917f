//go:build !unix

package migratetest

import "syscall"

func ownProcessGroup() *syscall.SysProcAttr { return nil }
