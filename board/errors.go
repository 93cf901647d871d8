// errors.go: the sentinel errors of package board.

package board

import "errors"

var (
	// ErrUnknownBoard is returned by Lookup for a name that is no profile.
	ErrUnknownBoard = errors.New("unknown board")

	// ErrBudgetTooSmall means a memory budget is below MinMemoryMiB.
	ErrBudgetTooSmall = errors.New("memory budget too small")

	// ErrInconsistent means a set of limits breaks one of the relations
	// Budget.Check states (for example GOMEMLIMIT above MemoryHigh).
	ErrInconsistent = errors.New("inconsistent memory limits")

	// ErrDiskTooSmall means StorageMax does not fit the free disk space.
	ErrDiskTooSmall = errors.New("not enough free disk space")
)
