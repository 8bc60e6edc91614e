//! URL mode: the full address with its host in bold, the reasons to look
//! twice, and the promise that nothing opens before the click.

use elicit_form::UrlView;
use elicit_i18n::{fill, tr};
use gtk::glib;
use gtk::prelude::*;

/// Pango markup of the URL: the host in bold between the rest.
pub fn markup(view: &UrlView) -> String {
    format!(
        "{}<b>{}</b>{}",
        glib::markup_escape_text(&view.before_host),
        glib::markup_escape_text(&view.host),
        glib::markup_escape_text(&view.after_host)
    )
}

/// The widgets of a URL-mode form.
pub fn build(view: &UrlView) -> gtk::Box {
    let root = gtk::Box::new(gtk::Orientation::Vertical, 10);
    let intro = gtk::Label::new(Some(&tr("It asks you to open this address in your browser:")));
    intro.set_xalign(0.0);
    intro.set_wrap(true);
    root.append(&intro);
    let address = gtk::Label::new(None);
    address.set_markup(&markup(view));
    address.set_xalign(0.0);
    address.set_wrap(true);
    address.set_wrap_mode(gtk::pango::WrapMode::Char);
    address.set_selectable(true);
    address.add_css_class("monospace");
    // Assistive technologies read the address as it will be opened.
    address.update_property(&[gtk::accessible::Property::Label(&view.full)]);
    root.append(&address);
    if !view.host.is_empty() {
        let host = gtk::Label::new(None);
        let name = glib::markup_escape_text(view.unicode_host.as_deref().unwrap_or(&view.host));
        // TRANSLATORS: Pango markup: keep <b> and </b> around {site}.
        host.set_markup(&fill(&tr("Site: <b>{site}</b>"), &[("site", &name)]));
        host.set_xalign(0.0);
        host.set_wrap(true);
        // A long host wraps anywhere rather than widen the window past the
        // screen (a name has no spaces to wrap at).
        host.set_wrap_mode(gtk::pango::WrapMode::WordChar);
        root.append(&host);
    }
    for warning in &view.warnings {
        let line = gtk::Box::new(gtk::Orientation::Horizontal, 6);
        let icon = gtk::Image::from_icon_name("dialog-warning-symbolic");
        icon.set_valign(gtk::Align::Start);
        let text = gtk::Label::new(Some(&fill(&tr("Careful: {warning}."), &[("warning", warning)])));
        text.set_xalign(0.0);
        text.set_wrap(true);
        text.set_wrap_mode(gtk::pango::WrapMode::WordChar);
        text.set_hexpand(true);
        text.add_css_class("warning");
        line.append(&icon);
        line.append(&text);
        root.append(&line);
    }
    let note = gtk::Label::new(Some(&tr(
        "Nothing has been opened. “Open in browser” opens it and tells the server you agreed.",
    )));
    note.set_xalign(0.0);
    note.set_wrap(true);
    note.add_css_class("dim-label");
    root.append(&note);
    root
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_bold_and_the_rest_escaped() {
        let url = url::Url::parse("https://example.com/a?b=1&c=<2>").expect("a URL");
        let view = UrlView::new(&url);
        assert_eq!(markup(&view), "https://<b>example.com</b>/a?b=1&amp;c=%3C2%3E");
    }
}
