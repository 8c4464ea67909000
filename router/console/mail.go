package console

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/url"
	"strings"
	"time"
)

// smtpMailer sends through one SMTP server: smtp:// (STARTTLS when the
// server offers it) or smtps:// (TLS from the start), with PLAIN auth when
// the URL carries a user.
type smtpMailer struct {
	addr     string
	host     string
	implicit bool
	auth     smtp.Auth
	from     *mail.Address
	helo     string
}

func newSMTPMailer(raw, from, helo string) (*smtpMailer, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
		return nil, fmt.Errorf("%w: --smtp-url must look like smtp://user:pass@host:port", ErrMailOff)
	}
	if from == "" {
		return nil, fmt.Errorf("%w: --mail-from is required with --smtp-url", ErrMailOff)
	}
	addr, err := mail.ParseAddress(from)
	if err != nil {
		return nil, fmt.Errorf("%w: --mail-from %q is not an address: %w", ErrMailOff, from, err)
	}
	m := &smtpMailer{host: u.Hostname(), implicit: u.Scheme == "smtps", from: addr, helo: helo}
	port := u.Port()
	if port == "" {
		port = map[bool]string{true: "465", false: "25"}[m.implicit]
	}
	m.addr = net.JoinHostPort(m.host, port)
	if u.User != nil {
		pw, _ := u.User.Password()
		m.auth = smtp.PlainAuth("", u.User.Username(), pw, m.host)
	}
	return m, nil
}

// Send delivers one message with a plain-text and an HTML part.
func (m *smtpMailer) Send(ctx context.Context, to, subject, text, html string) error {
	rcpt, err := mail.ParseAddress(to)
	if err != nil {
		return fmt.Errorf("cannot send to %q: %w", to, err)
	}
	msg, err := buildMessage(m.from, rcpt, subject, text, html)
	if err != nil {
		return err
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(20 * time.Second)
	}
	d := &net.Dialer{Deadline: deadline}
	var conn net.Conn
	if m.implicit {
		conn, err = tls.DialWithDialer(d, "tcp", m.addr, &tls.Config{ServerName: m.host, MinVersion: tls.VersionTLS12})
	} else {
		conn, err = d.DialContext(ctx, "tcp", m.addr)
	}
	if err != nil {
		return fmt.Errorf("cannot reach the mail server %s: %w", m.addr, err)
	}
	_ = conn.SetDeadline(deadline)
	cl, err := smtp.NewClient(conn, m.host)
	if err != nil {
		_ = conn.Close()
		return fmt.Errorf("cannot talk to the mail server: %w", err)
	}
	defer cl.Close()
	return m.deliver(cl, rcpt.Address, msg)
}

func (m *smtpMailer) deliver(cl *smtp.Client, rcpt string, msg []byte) error {
	if err := cl.Hello(m.helo); err != nil {
		return fmt.Errorf("mail server refused HELO: %w", err)
	}
	if ok, _ := cl.Extension("STARTTLS"); ok && !m.implicit {
		if err := cl.StartTLS(&tls.Config{ServerName: m.host, MinVersion: tls.VersionTLS12}); err != nil {
			return fmt.Errorf("cannot start TLS with the mail server: %w", err)
		}
	}
	if m.auth != nil {
		if err := cl.Auth(m.auth); err != nil {
			return fmt.Errorf("mail server refused the credentials: %w", err)
		}
	}
	if err := cl.Mail(m.from.Address); err != nil {
		return fmt.Errorf("mail server refused the sender: %w", err)
	}
	if err := cl.Rcpt(rcpt); err != nil {
		return fmt.Errorf("mail server refused the recipient: %w", err)
	}
	w, err := cl.Data()
	if err != nil {
		return fmt.Errorf("mail server refused the message: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("cannot send the message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("mail server refused the message: %w", err)
	}
	return cl.Quit()
}

// buildMessage writes an RFC 5322 message with a multipart/alternative
// body. Header values are encoded, so no input can add a header.
func buildMessage(from, to *mail.Address, subject, text, html string) ([]byte, error) {
	var b bytes.Buffer
	boundary := "hebb-" + randomToken(12)
	hdr := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	hdr("From", from.String())
	hdr("To", to.String())
	hdr("Subject", mime.QEncoding.Encode("utf-8", strings.NewReplacer("\r", " ", "\n", " ").Replace(subject)))
	hdr("Date", time.Now().UTC().Format(time.RFC1123Z))
	hdr("Message-ID", "<"+randomToken(16)+"@"+domainOf(from.Address)+">")
	hdr("MIME-Version", "1.0")
	hdr("Content-Type", `multipart/alternative; boundary="`+boundary+`"`)
	b.WriteString("\r\n")
	for _, part := range []struct{ typ, body string }{{"text/plain", text}, {"text/html", html}} {
		fmt.Fprintf(&b, "--%s\r\nContent-Type: %s; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n",
			boundary, part.typ)
		qp := quotedprintable.NewWriter(&b)
		if _, err := qp.Write([]byte(part.body)); err != nil {
			return nil, err
		}
		if err := qp.Close(); err != nil {
			return nil, err
		}
		b.WriteString("\r\n")
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return b.Bytes(), nil
}

func domainOf(addr string) string {
	if _, d, ok := strings.Cut(addr, "@"); ok && d != "" {
		return d
	}
	return "hebb.local"
}
