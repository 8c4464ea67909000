package pack

import (
	"fmt"
	"regexp"
	"strings"
)

// Privacy is how a render treats sensitive data in memories.
type Privacy string

// Privacy modes.
const (
	// PrivacyAllow renders memories as stored.
	PrivacyAllow Privacy = "allow"
	// PrivacyRedact masks what Redact finds ([email], [phone], [card],
	// [secret]) and renders the rest.
	PrivacyRedact Privacy = "redact"
	// PrivacyExclude leaves out every memory in which Redact finds
	// anything.
	PrivacyExclude Privacy = "exclude"
)

// PrivacyModes lists the modes, the default first.
func PrivacyModes() []Privacy { return []Privacy{PrivacyAllow, PrivacyRedact, PrivacyExclude} }

// ParsePrivacy checks a privacy mode's name.
func ParsePrivacy(s string) (Privacy, error) {
	for _, p := range PrivacyModes() {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %q", ErrUnknownPrivacy, s)
}

// ApplyPrivacy applies mode to text: the text to render, whether the memory
// may be rendered at all, and how many spans were masked.
func ApplyPrivacy(mode Privacy, text string) (out string, keep bool, masked int) {
	switch mode {
	case PrivacyRedact:
		out, masked = Redact(text)
		return out, true, masked
	case PrivacyExclude:
		if _, n := Redact(text); n > 0 {
			return "", false, n
		}
		return text, true, 0
	default:
		return text, true, 0
	}
}

// Masks that replace what Redact finds.
const (
	maskEmail  = "[email]"
	maskPhone  = "[phone]"
	maskCard   = "[card]"
	maskSecret = "[secret]"
)

var (
	rePEM = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----`)
	// password: hunter2, api_key=abc... (the name stays, the value goes)
	reAssign = regexp.MustCompile(`(?i)\b(password|passwd|pass|pwd|passphrase|secret|token|api[_-]?key|access[_-]?key|client[_-]?secret)(\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\s,;]+)`)
	// "the password is hunter2", "the db password for prod is hunter2" (in
	// prose only for passwords: "the secret is safe" is no credential)
	reSaid   = regexp.MustCompile(`(?i)\b(password|passwd|pwd|passphrase)((?:\s+[^\s,;.:=]+){0,3}?\s+(?:is|was)\s+)("[^"\n]*"|'[^'\n]*'|[^\s,;]+)`)
	reBearer = regexp.MustCompile(`(?i)\b((?:bearer|basic)\s+)[A-Za-z0-9._~+/\-]{8,}=*`)
	// A JSON Web Token: header.payload.signature, base64url.
	reJWT = regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*`)
	// Keys with a well-known prefix (hebb, Stripe, OpenAI, GitHub, Slack,
	// GitLab, AWS, Google).
	reKeyPrefix = regexp.MustCompile(`\b(?:mk_live_|sk_live_|sk_test_|rk_live_|pk_live_|sk-|ghp_|gho_|ghu_|ghs_|github_pat_|xox[abposr]-|glpat-|AKIA|ASIA|AIza)[A-Za-z0-9_\-]{8,}`)
	reEmail     = regexp.MustCompile(`[\p{L}\p{N}._%+\-]+@[\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)*\.\p{L}{2,}`)
	reDigits    = regexp.MustCompile(`\+?\(?\d[\d ()./\-]{6,}\d`)
	reLongToken = regexp.MustCompile(`[A-Za-z0-9_\-+/=]{32,}`)
	reUUID      = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	reLocalTel  = regexp.MustCompile(`^\d{3}-\d{4}$`) // 555-1234
	reDateLike  = regexp.MustCompile(`\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{4}`)
)

// Redact masks e-mail addresses, phone numbers, payment card numbers
// (Luhn-checked), private keys, credentials in "name: value" form and
// passwords said in prose, bearer and basic credentials, JSON Web Tokens,
// keys with a well-known prefix and long random-looking tokens. It
// returns the masked text and the number of masked spans. Detection is
// heuristic: it errs towards masking.
func Redact(text string) (string, int) {
	n := 0
	count := func(out string) string { n++; return out }
	text = rePEM.ReplaceAllStringFunc(text, func(string) string { return count(maskSecret) })
	for _, re := range []*regexp.Regexp{reAssign, reSaid} {
		text = re.ReplaceAllStringFunc(text, func(m string) string {
			sub := re.FindStringSubmatch(m)
			return count(sub[1] + sub[2] + maskSecret)
		})
	}
	text = reBearer.ReplaceAllStringFunc(text, func(m string) string {
		return count(reBearer.FindStringSubmatch(m)[1] + maskSecret)
	})
	text = reKeyPrefix.ReplaceAllStringFunc(text, func(string) string { return count(maskSecret) })
	text = reJWT.ReplaceAllStringFunc(text, func(string) string { return count(maskSecret) })
	text = reEmail.ReplaceAllStringFunc(text, func(string) string { return count(maskEmail) })
	text = redactDigits(text, &n)
	text = reLongToken.ReplaceAllStringFunc(text, func(m string) string {
		if !randomLooking(m) {
			return m
		}
		return count(maskSecret)
	})
	return text, n
}

// redactDigits masks card numbers and phone numbers among digit runs.
func redactDigits(text string, n *int) string {
	locs := reDigits.FindAllStringIndex(text, -1)
	if locs == nil {
		return text
	}
	var b strings.Builder
	last := 0
	for _, l := range locs {
		start, end := l[0], l[1]
		if start > 0 && (isAlnum(text[start-1]) || text[start-1] == ':') || end < len(text) && isAlnum(text[end]) {
			continue // part of a word, a time or a longer token
		}
		mask := digitMask(strings.TrimRight(text[start:end], " ()./-"))
		if mask == "" {
			continue
		}
		b.WriteString(text[last:start])
		b.WriteString(mask)
		last = end
		*n++
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// digitMask tells what a run of digits and separators is: a card number, a
// phone number, or nothing to mask ("").
func digitMask(run string) string {
	if reDateLike.MatchString(run) || strings.Count(run, ".") == 1 && strings.Trim(run, "0123456789.") == "" {
		return "" // a date or a decimal number
	}
	var digits []byte
	for i := 0; i < len(run); i++ {
		if run[i] >= '0' && run[i] <= '9' {
			digits = append(digits, run[i])
		}
	}
	switch {
	case len(digits) >= 13 && len(digits) <= 19 && luhn(digits):
		return maskCard
	case len(digits) >= 9 && len(digits) <= 15, reLocalTel.MatchString(run):
		return maskPhone
	}
	return ""
}

func luhn(digits []byte) bool {
	sum := 0
	for i := range digits {
		d := int(digits[len(digits)-1-i] - '0')
		if i%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// randomLooking tells a key-like token (letters and digits mixed, not a
// UUID) from a long word or path.
func randomLooking(s string) bool {
	if reUUID.MatchString(s) {
		return false
	}
	var digits, upper, lower, symbols int
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'z':
			lower++
		case c >= 'A' && c <= 'Z':
			upper++
		case c == '/' || c == '+':
			symbols++
		}
	}
	// Base64 with few digits (an AWS secret key) still mixes cases and
	// '/' or '+', which words, paths and identifiers rarely do together.
	return upper+lower > 0 && (digits >= 4 || (symbols > 0 && upper > 0 && lower > 0))
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}
