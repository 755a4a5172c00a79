package mcpclient

// CheckServerOptions reports whether RegisterServer would accept opts,
// without registering anything: the option checks (exactly one of URL,
// Command and InProcess; transport type; header names; retry options;
// protocol version) and, for a URL, the SSRF guard. The error wraps
// netguard.ErrBlockedURL for a URL the guard refuses; the guard judges the
// URL first, so a blocked host is reported as blocked whatever its scheme.
func (m *Manager) CheckServerOptions(opts ServerOptions) error {
	if opts.URL != "" {
		if err := m.guard.CheckURL(opts.URL); err != nil {
			return err
		}
	}
	return opts.validate()
}
