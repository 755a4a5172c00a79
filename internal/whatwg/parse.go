package whatwg

import (
	"strconv"
	"strings"
)

// The parser below is a transcription of the standard's basic URL parser
// (https://url.spec.whatwg.org/#concept-basic-url-parser) for the case
// without a base URL, encoding override, URL argument or state override.
// States and steps keep the standard's names so the two can be read side
// by side; the states that only serve relative references are absent,
// because without a base URL they all fail.

type state int

const (
	schemeStartState state = iota
	schemeState
	specialAuthoritySlashesState
	specialAuthorityIgnoreSlashesState
	pathOrAuthorityState
	authorityState
	hostState
	portState
	fileState
	fileSlashState
	fileHostState
	pathStartState
	pathState
	opaquePathState
	queryState
	fragmentState
)

// eof is the EOF code point: what c is when the pointer is past the input.
const eof = -1

// parser holds the URL record being built and the state machine's
// variables.
type parser struct {
	in  []rune
	ptr int

	state             state
	buf               []rune
	atSignSeen        bool
	insideBrackets    bool
	passwordTokenSeen bool

	scheme      string
	special     bool
	username    []byte
	password    []byte
	hasHost     bool // the standard's host is non-null
	host        string
	port        string
	path        []string // segments, unless opaque
	opaque      bool
	opaquePath  []byte
	hasQuery    bool
	query       []byte
	hasFragment bool
	fragment    []byte
}

func parse(raw string) (*URL, error) {
	// Strip leading and trailing C0 controls and spaces, then remove every
	// tab and newline.
	raw = strings.TrimFunc(raw, func(r rune) bool { return r <= 0x20 })
	raw = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, raw)

	p := &parser{in: []rune(raw), state: schemeStartState}
	for ; ; p.ptr++ {
		if err := p.step(p.c()); err != nil {
			return nil, err
		}
		if p.ptr >= len(p.in) {
			break
		}
	}
	return p.result(), nil
}

// c returns the code point the pointer points at, or eof.
func (p *parser) c() rune {
	if p.ptr >= 0 && p.ptr < len(p.in) {
		return p.in[p.ptr]
	}
	return eof
}

// remaining returns the code points after the pointer.
func (p *parser) remaining() []rune {
	if p.ptr+1 >= len(p.in) {
		return nil
	}
	return p.in[p.ptr+1:]
}

func (p *parser) remainingStartsWith(r rune) bool {
	rest := p.remaining()
	return len(rest) > 0 && rest[0] == r
}

// isSlash reports whether c ends a path segment: '/', or for special
// schemes also '\'.
func isSlash(p *parser, c rune) bool {
	return c == '/' || p.special && c == '\\'
}

func (p *parser) step(c rune) error {
	switch p.state {
	case schemeStartState:
		if isAlpha(c) {
			p.buf = append(p.buf, toLower(c))
			p.state = schemeState
			return nil
		}
		// No scheme state: without a base URL, a relative reference.
		return invalid("missing scheme")

	case schemeState:
		switch {
		case isAlpha(c) || isDigit(c) || c == '+' || c == '-' || c == '.':
			p.buf = append(p.buf, toLower(c))
		case c == ':':
			p.scheme = string(p.buf)
			p.special = Special(p.scheme)
			p.buf = p.buf[:0]
			switch {
			case p.scheme == "file":
				p.state = fileState
			case p.special:
				p.state = specialAuthoritySlashesState
			case p.remainingStartsWith('/'):
				p.state = pathOrAuthorityState
				p.ptr++
			default:
				p.opaque = true
				p.state = opaquePathState
			}
		default:
			// Start over in the no scheme state, which fails without a
			// base URL.
			return invalid("missing scheme")
		}

	case specialAuthoritySlashesState:
		if c == '/' && p.remainingStartsWith('/') {
			p.state = specialAuthorityIgnoreSlashesState
			p.ptr++
		} else {
			p.state = specialAuthorityIgnoreSlashesState
			p.ptr--
		}

	case specialAuthorityIgnoreSlashesState:
		if c != '/' && c != '\\' {
			p.state = authorityState
			p.ptr--
		}

	case pathOrAuthorityState:
		if c == '/' {
			p.state = authorityState
		} else {
			p.state = pathState
			p.ptr--
		}

	case authorityState:
		switch {
		case c == '@':
			if p.atSignSeen {
				p.buf = append([]rune("%40"), p.buf...)
			}
			p.atSignSeen = true
			for _, r := range p.buf {
				if r == ':' && !p.passwordTokenSeen {
					p.passwordTokenSeen = true
					continue
				}
				if p.passwordTokenSeen {
					p.password = appendEncoded(p.password, r, userinfoSet)
				} else {
					p.username = appendEncoded(p.username, r, userinfoSet)
				}
			}
			p.buf = p.buf[:0]
		case c == eof || c == '?' || c == '#' || isSlash(p, c):
			if p.atSignSeen && len(p.buf) == 0 {
				return invalid("credentials without a host")
			}
			p.ptr -= len(p.buf) + 1
			p.buf = p.buf[:0]
			p.state = hostState
		default:
			p.buf = append(p.buf, c)
		}

	case hostState:
		switch {
		case c == ':' && !p.insideBrackets:
			if len(p.buf) == 0 {
				return invalid("missing host")
			}
			if err := p.setHost(); err != nil {
				return err
			}
			p.state = portState
		case c == eof || c == '?' || c == '#' || isSlash(p, c):
			p.ptr--
			if p.special && len(p.buf) == 0 {
				return invalid("missing host")
			}
			if err := p.setHost(); err != nil {
				return err
			}
			p.state = pathStartState
		default:
			if c == '[' {
				p.insideBrackets = true
			}
			if c == ']' {
				p.insideBrackets = false
			}
			p.buf = append(p.buf, c)
		}

	case portState:
		switch {
		case isDigit(c):
			p.buf = append(p.buf, c)
		case c == eof || c == '?' || c == '#' || isSlash(p, c):
			if len(p.buf) > 0 {
				port := 0
				for _, d := range p.buf {
					port = port*10 + int(d-'0')
					if port > 0xffff {
						return invalid("port out of range")
					}
				}
				p.port = strconv.Itoa(port)
				if p.port == defaultPort(p.scheme) {
					p.port = ""
				}
				p.buf = p.buf[:0]
			}
			p.state = pathStartState
			p.ptr--
		default:
			return invalid("invalid port")
		}

	case fileState:
		p.hasHost, p.host = true, ""
		if c == '/' || c == '\\' {
			p.state = fileSlashState
		} else {
			p.state = pathState
			p.ptr--
		}

	case fileSlashState:
		if c == '/' || c == '\\' {
			p.state = fileHostState
		} else {
			p.state = pathState
			p.ptr--
		}

	case fileHostState:
		switch c {
		case eof, '/', '\\', '?', '#':
			p.ptr--
			switch {
			case isWindowsDriveLetter(p.buf):
				// A Windows drive letter quirk: "file://C:/x" is a path.
				// The buffer is kept for the path state.
				p.state = pathState
			case len(p.buf) == 0:
				p.hasHost, p.host = true, ""
				p.state = pathStartState
			default:
				if err := p.setHost(); err != nil {
					return err
				}
				if p.host == "localhost" {
					p.host = ""
				}
				p.state = pathStartState
			}
		default:
			p.buf = append(p.buf, c)
		}

	case pathStartState:
		switch {
		case p.special:
			p.state = pathState
			if c != '/' && c != '\\' {
				p.ptr--
			}
		case c == '?':
			p.hasQuery = true
			p.state = queryState
		case c == '#':
			p.hasFragment = true
			p.state = fragmentState
		case c != eof:
			p.state = pathState
			if c != '/' {
				p.ptr--
			}
		}

	case pathState:
		if c == eof || c == '?' || c == '#' || isSlash(p, c) {
			slash := isSlash(p, c)
			switch seg := string(p.buf); {
			case isDoubleDot(seg):
				p.shortenPath()
				if !slash {
					p.path = append(p.path, "")
				}
			case isSingleDot(seg):
				if !slash {
					p.path = append(p.path, "")
				}
			default:
				if p.scheme == "file" && len(p.path) == 0 && isWindowsDriveLetter(p.buf) {
					seg = seg[:1] + ":"
				}
				p.path = append(p.path, seg)
			}
			p.buf = p.buf[:0]
			switch c {
			case '?':
				p.hasQuery = true
				p.state = queryState
			case '#':
				p.hasFragment = true
				p.state = fragmentState
			}
		} else {
			// The buffer holds only ASCII after encoding, so it can be
			// kept as runes and compared as a string.
			for _, b := range appendEncoded(nil, c, pathSet) {
				p.buf = append(p.buf, rune(b))
			}
		}

	case opaquePathState:
		switch {
		case c == '?':
			p.hasQuery = true
			p.state = queryState
		case c == '#':
			p.hasFragment = true
			p.state = fragmentState
		case c == ' ':
			// A space before a query or fragment is encoded so that the
			// serialisation, which ends the path there, parses back the
			// same.
			if rest := p.remaining(); len(rest) > 0 && (rest[0] == '?' || rest[0] == '#') {
				p.opaquePath = append(p.opaquePath, "%20"...)
			} else {
				p.opaquePath = append(p.opaquePath, ' ')
			}
		case c != eof:
			p.opaquePath = appendEncoded(p.opaquePath, c, c0ControlSet)
		}

	case queryState:
		// The input is always UTF-8, so the query can be encoded code
		// point by code point instead of buffered.
		switch {
		case c == '#':
			p.hasFragment = true
			p.state = fragmentState
		case c != eof:
			set := querySet
			if p.special {
				set = specialQuerySet
			}
			p.query = appendEncoded(p.query, c, set)
		}

	case fragmentState:
		if c != eof {
			p.fragment = appendEncoded(p.fragment, c, fragmentSet)
		}
	}
	return nil
}

// setHost host-parses the buffer, stores the result and empties the buffer.
func (p *parser) setHost() error {
	h, err := parseHost(string(p.buf), p.special)
	if err != nil {
		return err
	}
	p.hasHost, p.host = true, h
	p.buf = p.buf[:0]
	return nil
}

// shortenPath removes the last path segment, except that a file URL keeps
// a lone Windows drive letter ("file:///C:/.." stays at "C:").
func (p *parser) shortenPath() {
	if p.scheme == "file" && len(p.path) == 1 && isNormalizedWindowsDriveLetter(p.path[0]) {
		return
	}
	if len(p.path) > 0 {
		p.path = p.path[:len(p.path)-1]
	}
}

// result converts the URL record into a URL.
func (p *parser) result() *URL {
	u := &URL{
		Scheme:        p.scheme,
		Username:      string(p.username),
		Password:      string(p.password),
		Host:          p.host,
		Port:          p.port,
		Query:         string(p.query),
		Fragment:      string(p.fragment),
		OmitHost:      !p.hasHost,
		ForceQuery:    p.hasQuery && len(p.query) == 0,
		ForceFragment: p.hasFragment && len(p.fragment) == 0,
	}
	if p.opaque {
		u.Path = string(p.opaquePath)
	} else {
		var b strings.Builder
		for _, seg := range p.path {
			b.WriteByte('/')
			b.WriteString(seg)
		}
		u.Path = b.String()
	}
	return u
}

func isAlpha(r rune) bool { return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' }

func toLower(r rune) rune {
	if 'A' <= r && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

// isSingleDot reports whether seg is "." or "%2e", case-insensitively.
func isSingleDot(seg string) bool {
	return seg == "." || strings.EqualFold(seg, "%2e")
}

// isDoubleDot reports whether seg is "..", ".%2e", "%2e." or "%2e%2e",
// case-insensitively.
func isDoubleDot(seg string) bool {
	switch strings.ToLower(seg) {
	case "..", ".%2e", "%2e.", "%2e%2e":
		return true
	}
	return false
}

// isWindowsDriveLetter reports whether s is an ASCII letter followed by
// ':' or '|'.
func isWindowsDriveLetter(s []rune) bool {
	return len(s) == 2 && isAlpha(s[0]) && (s[1] == ':' || s[1] == '|')
}

func isNormalizedWindowsDriveLetter(s string) bool {
	return len(s) == 2 && isAlpha(rune(s[0])) && s[1] == ':'
}
