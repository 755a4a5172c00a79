package agent

// ConnectError is the error of AddMCPServer and Reconnect for a server
// that is stored but could not be connected or discovered (or whose
// authorisation could not start): it stays stored, and a failed one is
// retried in the background. Its text is Err's.
type ConnectError struct {
	// ID and Name are the server's.
	ID, Name string
	// Err says what failed, naming the server's URL or command.
	Err error
}

func (e *ConnectError) Error() string { return e.Err.Error() }
func (e *ConnectError) Unwrap() error { return e.Err }

// connectError wraps err, the failed connection of server id, in a
// *ConnectError.
func (a *Agent) connectError(id string, err error) error {
	a.mu.Lock()
	name := a.rows[id].Name
	a.mu.Unlock()
	return &ConnectError{ID: id, Name: name, Err: err}
}
