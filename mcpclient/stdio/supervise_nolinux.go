//go:build !linux

package stdio

import "log/slog"

// supervisorWatch is the watch of a supervisor; there is none on these
// systems (supervise returns nil).
type supervisorWatch struct{}

func (*supervisorWatch) started(error, *slog.Logger, func(error)) {}

func (*supervisorWatch) wait() {}
