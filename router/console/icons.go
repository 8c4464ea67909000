package console

import "html/template"

// icons are the console's own line drawings, 24x24, stroked with the
// current text colour.
var icons = map[string]string{
	"overview": `<rect x="3" y="3" width="7" height="9" rx="1.5"/><rect x="14" y="3" width="7" height="5" rx="1.5"/>` +
		`<rect x="14" y="12" width="7" height="9" rx="1.5"/><rect x="3" y="16" width="7" height="5" rx="1.5"/>`,
	"memories": `<circle cx="12" cy="12" r="3"/><circle cx="5" cy="6" r="2"/><circle cx="19" cy="6" r="2"/>` +
		`<circle cx="6" cy="19" r="2"/><circle cx="18" cy="18" r="2"/><path d="M6.6 7.3 9.8 10M17.4 7.3l-3.2 2.7M7.4 17.6l2.4-3.3M16.5 16.6l-2.3-2.4"/>`,
	"keys":     `<circle cx="8" cy="15" r="4"/><path d="M11 12 20 3M16 7l3 3M14 9l2 2"/>`,
	"settings": `<path d="M4 7h10M18 7h2M4 17h4M12 17h8"/><circle cx="16" cy="7" r="2"/><circle cx="10" cy="17" r="2"/>`,
	"rooms":    `<circle cx="9" cy="9" r="3.2"/><circle cx="17" cy="10" r="2.5"/><path d="M3 20c0-3.3 2.7-6 6-6s6 2.7 6 6M15 15.2c.6-.2 1.3-.2 2-.2 2.5 0 4.5 2 4.5 4.5"/>`,
	"vault":    `<rect x="4" y="10" width="16" height="11" rx="2"/><path d="M8 10V7a4 4 0 0 1 8 0v3"/><circle cx="12" cy="15.5" r="1.5"/>`,
	"cluster": `<rect x="3" y="4" width="18" height="6" rx="1.5"/><rect x="3" y="14" width="18" height="6" rx="1.5"/>` +
		`<path d="M7 7h.01M7 17h.01"/>`,
	"search":  `<circle cx="11" cy="11" r="6.5"/><path d="m16 16 4.5 4.5"/>`,
	"plus":    `<path d="M12 5v14M5 12h14"/>`,
	"trash":   `<path d="M4 7h16M9 7V4h6v3M6.5 7l1 13h9l1-13"/>`,
	"copy":    `<rect x="8" y="8" width="12" height="12" rx="2"/><path d="M16 8V5.5A1.5 1.5 0 0 0 14.5 4h-9A1.5 1.5 0 0 0 4 5.5v9A1.5 1.5 0 0 0 5.5 16H8"/>`,
	"mail":    `<rect x="3" y="5" width="18" height="14" rx="2"/><path d="m4 7 8 6 8-6"/>`,
	"moon":    `<path d="M20 14.5A8 8 0 0 1 9.5 4a8 8 0 1 0 10.5 10.5z"/>`,
	"logout":  `<path d="M15 4h3a2 2 0 0 1 2 2v12a2 2 0 0 1-2 2h-3M10 8l-4 4 4 4M6 12h10"/>`,
	"chain":   `<path d="M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1"/>`,
	"arrow":   `<path d="M5 12h14M13 6l6 6-6 6"/>`,
	"check":   `<path d="m5 12.5 4.5 4.5L19 7.5"/>`,
	"archive": `<rect x="3" y="4" width="18" height="5" rx="1"/><path d="M5 9v10a1 1 0 0 0 1 1h12a1 1 0 0 0 1-1V9M10 13h4"/>`,
}

// logo is hebb's mark: two linked nodes.
const logo = `<svg class="logo" viewBox="0 0 32 32" aria-hidden="true"><rect width="32" height="32" rx="8" class="logo-bg"/>` +
	`<circle cx="11" cy="12" r="4" class="logo-fg"/><circle cx="21" cy="20" r="4" class="logo-fg"/>` +
	`<path d="M13.8 14.8 18.2 17.2" class="logo-line"/></svg>`

func icon(name string) template.HTML {
	if name == "logo" {
		return template.HTML(logo) //nolint:gosec // constant markup
	}
	return template.HTML(`<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" ` + //nolint:gosec // constant markup
		`stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round">` + icons[name] + `</svg>`)
}
