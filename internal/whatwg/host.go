package whatwg

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// idnaProfile is the standard's "domain parser ToASCII" with beStrict
// false: UTS #46 ToASCII with CheckHyphens, UseSTD3ASCIIRules and
// VerifyDnsLength off, CheckBidi and CheckJoiners on, non-transitional
// processing. The mapping tables are those of x/net/idna for the Unicode
// version of the Go toolchain.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	// MapForLookup turns these on; the standard wants them off.
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
	idna.CheckJoiners(true),
	idna.VerifyDNSLength(false),
)

// ParseHost runs the host parser of a special URL (http, https, ws, wss,
// ftp) on s and returns the serialised host: a lower-case ASCII domain, a
// dotted-decimal IPv4 address, or a bracketed IPv6 address. IPv4 shorthand
// is canonicalised ("0x7f.1" becomes "127.0.0.1"); an IPv6 address must be
// bracketed, as in a URL.
func ParseHost(s string) (string, error) {
	if s == "" {
		return "", invalid("empty host")
	}
	return parseHost(s, true)
}

// parseHost is the host parser. A special URL's host is a domain or an
// address; other schemes get an opaque host, except that brackets always
// mean IPv6.
func parseHost(input string, special bool) (string, error) {
	if strings.HasPrefix(input, "[") {
		if !strings.HasSuffix(input, "]") {
			return "", invalid("unclosed IPv6 address")
		}
		a, ok := parseIPv6(input[1 : len(input)-1])
		if !ok {
			return "", invalid("invalid IPv6 address")
		}
		return "[" + serializeIPv6(a) + "]", nil
	}
	if !special {
		return parseOpaqueHost(input)
	}
	// The domain is the UTF-8 decoding of the percent-decoded input; an
	// invalid sequence becomes U+FFFD, which the domain parser rejects.
	domain := strings.ToValidUTF8(string(percentDecode(input)), "\uFFFD")
	ascii, err := domainToASCII(domain)
	if err != nil {
		return "", err
	}
	if endsInNumber(ascii) {
		v4, ok := parseIPv4(ascii)
		if !ok {
			return "", invalid("invalid IPv4 address")
		}
		return serializeIPv4(v4), nil
	}
	return ascii, nil
}

// domainToASCII is the standard's domain parser with beStrict false. For
// web compatibility an ASCII domain is only lower-cased, whatever UTS #46
// would say about it; other domains go through ToASCII.
func domainToASCII(domain string) (string, error) {
	var result string
	if isASCII(domain) {
		result = strings.ToLower(domain)
	} else {
		var err error
		result, err = idnaProfile.ToASCII(domain)
		if err != nil {
			return "", invalid("invalid internationalised domain name")
		}
	}
	if result == "" {
		return "", invalid("empty host")
	}
	for i := 0; i < len(result); i++ {
		if forbiddenDomain(rune(result[i])) {
			return "", invalid("forbidden code point in host")
		}
	}
	return result, nil
}

// parseOpaqueHost is the opaque-host parser used for non-special schemes.
func parseOpaqueHost(input string) (string, error) {
	for _, r := range input {
		if forbiddenHost(r) {
			return "", invalid("forbidden code point in host")
		}
	}
	return encodeString(input, c0ControlSet), nil
}

// forbiddenHost reports whether r is a forbidden host code point.
func forbiddenHost(r rune) bool {
	switch r {
	case 0, '\t', '\n', '\r', ' ', '#', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|':
		return true
	}
	return false
}

// forbiddenDomain reports whether r is a forbidden domain code point: a
// forbidden host code point, a C0 control, '%' or DEL.
func forbiddenDomain(r rune) bool {
	return forbiddenHost(r) || r <= 0x1f || r == '%' || r == 0x7f
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// endsInNumber is the standard's "ends in a number checker": whether the
// last label (ignoring one trailing dot) is all digits or a 0x number, in
// which case the host must parse as IPv4.
func endsInNumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4 is the standard's IPv4 parser. Each of up to four dot-separated
// parts is decimal, octal (leading 0) or hex (leading 0x); the last part
// fills all remaining bytes, so "10.1" is 10.0.0.1 and "2130706433" is
// 127.0.0.1.
func parseIPv4(s string) (uint32, bool) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return 0, false
	}
	numbers := make([]uint64, len(parts))
	for i, part := range parts {
		n, ok := parseIPv4Number(part)
		if !ok {
			return 0, false
		}
		numbers[i] = n
	}
	last := len(numbers) - 1
	for _, n := range numbers[:last] {
		if n > 255 {
			return 0, false
		}
	}
	if numbers[last] >= 1<<(8*(5-len(numbers))) {
		return 0, false
	}
	ipv4 := numbers[last]
	for i, n := range numbers[:last] {
		ipv4 += n << (8 * (3 - i))
	}
	return uint32(ipv4), true
}

// parseIPv4Number is the standard's IPv4 number parser. Values are
// saturated just above 2^32, which every caller treats as out of range.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	const limit = 1 << 33
	var n uint64
	for i := 0; i < len(s); i++ {
		d, ok := digitValue(s[i])
		if !ok || d >= base {
			return 0, false
		}
		n = min(n*base+d, limit)
	}
	return n, true
}

func digitValue(c byte) (uint64, bool) {
	switch {
	case '0' <= c && c <= '9':
		return uint64(c - '0'), true
	case 'a' <= c && c <= 'f':
		return uint64(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return uint64(c-'A') + 10, true
	}
	return 0, false
}

func serializeIPv4(a uint32) string {
	b := make([]byte, 0, len("255.255.255.255"))
	for i := 3; i >= 0; i-- {
		b = strconv.AppendUint(b, uint64(a>>(8*i)&0xff), 10)
		if i > 0 {
			b = append(b, '.')
		}
	}
	return string(b)
}

// parseIPv6 is the standard's IPv6 parser. It accepts one "::" and a
// trailing dotted-decimal IPv4 part, and rejects zone identifiers.
func parseIPv6(s string) (a [8]uint16, ok bool) {
	in := []rune(s)
	at := func(i int) rune {
		if i < len(in) {
			return in[i]
		}
		return -1 // EOF
	}
	piece, compress, p := 0, -1, 0
	if at(p) == ':' {
		if at(p+1) != ':' {
			return a, false
		}
		p += 2
		piece++
		compress = piece
	}
	for at(p) != -1 {
		if piece == 8 {
			return a, false
		}
		if at(p) == ':' {
			if compress != -1 {
				return a, false
			}
			p++
			piece++
			compress = piece
			continue
		}
		value, length := 0, 0
		for length < 4 && at(p) < utf8.RuneSelf && at(p) >= 0 && isHex(byte(at(p))) {
			value = value*0x10 + int(unhex(byte(at(p))))
			p++
			length++
		}
		if at(p) == '.' {
			// An embedded IPv4 address fills the last two pieces.
			if length == 0 {
				return a, false
			}
			p -= length
			if piece > 6 {
				return a, false
			}
			seen := 0
			for at(p) != -1 {
				v4 := -1
				if seen > 0 {
					if at(p) != '.' || seen >= 4 {
						return a, false
					}
					p++
				}
				if !isDigit(at(p)) {
					return a, false
				}
				for isDigit(at(p)) {
					n := int(at(p) - '0')
					switch v4 {
					case -1:
						v4 = n
					case 0:
						return a, false // leading zero
					default:
						v4 = v4*10 + n
					}
					if v4 > 255 {
						return a, false
					}
					p++
				}
				a[piece] = a[piece]*0x100 + uint16(v4)
				seen++
				if seen == 2 || seen == 4 {
					piece++
				}
			}
			if seen != 4 {
				return a, false
			}
			break
		} else if at(p) == ':' {
			p++
			if at(p) == -1 {
				return a, false
			}
		} else if at(p) != -1 {
			return a, false
		}
		a[piece] = uint16(value)
		piece++
	}
	if compress != -1 {
		swaps := piece - compress
		for piece = 7; piece != 0 && swaps > 0; piece, swaps = piece-1, swaps-1 {
			a[piece], a[compress+swaps-1] = a[compress+swaps-1], a[piece]
		}
	} else if piece != 8 {
		return a, false
	}
	return a, true
}

func isDigit(r rune) bool { return '0' <= r && r <= '9' }

// serializeIPv6 writes a in the standard's (RFC 5952) form: lower-case hex,
// the first longest run of two or more zero pieces compressed to "::", and
// no dotted-decimal tail, so ::ffff:10.0.0.1 becomes ::ffff:a00:1.
func serializeIPv6(a [8]uint16) string {
	compress, longest := -1, 1
	for i := 0; i < 8; {
		if a[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && a[j] == 0 {
			j++
		}
		if j-i > longest {
			compress, longest = i, j-i
		}
		i = j
	}
	var b []byte
	for i := 0; i < 8; i++ {
		if i == compress {
			if i == 0 {
				b = append(b, "::"...)
			} else {
				b = append(b, ':')
			}
			i += longest - 1
			continue
		}
		b = strconv.AppendUint(b, uint64(a[i]), 16)
		if i != 7 {
			b = append(b, ':')
		}
	}
	return string(b)
}
