package mcpclient

// CheckServerOptions reports whether RegisterServer would accept opts,
// without registering anything: the option checks (exactly one of URL,
// Command and InProcess; transport type; header names; retry options;
// protocol version) and, for a URL, the SSRF guard. The error wraps
// netguard.ErrBlockedURL for a URL the guard refuses.
func (m *Manager) CheckServerOptions(opts ServerOptions) error {
	if err := opts.validate(); err != nil {
		return err
	}
	if opts.URL != "" {
		return m.guard.CheckURL(opts.URL)
	}
	return nil
}
