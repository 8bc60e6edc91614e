//! What a form becomes in a notification: its text, its actions, and what
//! each action answers. No D-Bus here, so that it is tested on its own.
//!
//! A notification carries the whole form only when the form is a
//! confirmation (Accept / Decline) or one single-choice field of at most
//! [`MAX_CHOICES`] options (one action per option, and Decline). Anything
//! richer gets "Open…" (the form goes to another front-end) and Decline.

use elicit_form::{FormModel, UrlView};
use elicit_i18n::{fill, tr, trn};
use elicit_proto::dbus::Origin;
use elicit_proto::{Action, Answer, Elicitation, FieldKind, Mode};

/// The most options a notification offers as actions; more would not fit
/// the button rows of common notification servers.
pub const MAX_CHOICES: usize = 3;

/// The most characters of the server's message a notification carries:
/// it is a prompt to answer, not the place to read a long text ("Open…"
/// and the other front-ends show all of it).
pub const MAX_MESSAGE: usize = 200;

/// Action key of "Open…".
pub const OPEN: &str = "open";
/// Action key of "Accept".
pub const ACCEPT: &str = Action::Accept.as_str();
/// Action key of "Decline".
pub const DECLINE: &str = Action::Decline.as_str();
/// Action key prefix of the options of a choice: `option-0`, `option-1`…
pub const OPTION: &str = "option-";

/// What choosing an action does.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Answer the form with this.
    Answer(Answer),
    /// Hand the form to another front-end.
    PassOn,
}

/// A form as a notification.
#[derive(Debug, Clone)]
pub struct Card {
    /// The title: who asks.
    pub summary: String,
    /// The server's message, and what the actions mean.
    pub body: String,
    /// The icon: the asker's (`elicit ask --icon`), else a question's.
    pub icon: String,
    /// (key, label) pairs in the order they are shown.
    pub actions: Vec<(String, String)>,
    /// What each key does.
    replies: Vec<(String, Reply)>,
}

impl Card {
    /// The card for `request` from `origin`. `markup`: the server reads
    /// the body as markup (its `body-markup` capability), so text is
    /// escaped.
    pub fn new(request: &Elicitation, origin: &Origin, markup: bool) -> Card {
        let text = |s: &str| if markup { escape(s) } else { s.to_owned() };
        let summary = who_asks(origin);
        let mut card = Card {
            summary,
            body: text(&short(&request.message)),
            icon: origin.icon_name().unwrap_or("dialog-question").to_owned(),
            actions: Vec::new(),
            replies: Vec::new(),
        };
        match &request.mode {
            Mode::Form(form) => {
                let model = FormModel::new(form.clone());
                if model.is_confirmation() {
                    if let Some(answer) = submit(model) {
                        card.add(ACCEPT, &tr("Accept"), Reply::Answer(answer));
                    }
                } else if let [field] = form.fields.as_slice()
                    && let FieldKind::Choice { choices } = &field.kind
                    && (1..=MAX_CHOICES).contains(&choices.len())
                {
                    for (index, choice) in choices.iter().enumerate() {
                        let mut model = model.clone();
                        model.select(0, Some(index));
                        if let Some(answer) = submit(model) {
                            card.add(&format!("{OPTION}{index}"), &choice.label, Reply::Answer(answer));
                        }
                    }
                } else {
                    let names: Vec<&str> = form.fields.iter().map(|f| f.label.as_str()).collect();
                    let fields = trn(
                        "{n} field to fill in: {names}. Choose Open… to answer.",
                        "{n} fields to fill in: {names}. Choose Open… to answer.",
                        names.len(),
                    );
                    let names = names.join(", ");
                    card.body
                        .push_str(&text(&format!("\n\n{}", fill(&fields, &[("names", &names)]))));
                }
            }
            Mode::Url { .. } => {
                if let Some(view) = UrlView::from_request(request) {
                    // Before the server's message, which may imitate it and
                    // be long enough that the notification cuts what
                    // follows.
                    let mut page = fill(
                        &tr("It wants you to open a page on {host}."),
                        &[("host", &view.host)],
                    );
                    for warning in &view.warnings {
                        page.push('\n');
                        page.push_str(&fill(&tr("Careful: {warning}."), &[("warning", warning)]));
                    }
                    card.body = format!("{}\n\n{}", text(&page), card.body);
                }
            }
        }
        // Nothing answered in the notification itself: another front-end
        // shows the whole form.
        if card.actions.is_empty() {
            card.add(OPEN, &tr("Open…"), Reply::PassOn);
        }
        card.add(DECLINE, &tr("Decline"), Reply::Answer(FormModel::decline()));
        card
    }

    /// The card for a notification server that has no actions: it can only
    /// tell the user where to answer.
    pub fn without_actions(request: &Elicitation, origin: &Origin, markup: bool) -> Card {
        let mut card = Card::new(request, origin, markup);
        card.actions.clear();
        card.replies.clear();
        let hint = tr("Answer it in elicit-gtk or elicit-tui: this notification server cannot take answers.");
        card.body.push_str(&format!("\n\n{hint}"));
        card
    }

    /// What the action `key` does; `None` for a key this card never
    /// offered (a server's own `default`, or a forgery).
    pub fn reply(&self, key: &str) -> Option<&Reply> {
        self.replies
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, reply)| reply)
    }

    /// The actions as the `Notify` call wants them: key, label, key, label…
    pub fn action_list(&self) -> Vec<String> {
        self.actions
            .iter()
            .flat_map(|(key, label)| [key.clone(), label.clone()])
            .collect()
    }

    fn add(&mut self, key: &str, label: &str, reply: Reply) {
        self.actions.push((key.to_owned(), label.to_owned()));
        self.replies.push((key.to_owned(), reply));
    }
}

/// The accept answer of a model, if it is complete.
fn submit(mut model: FormModel) -> Option<Answer> {
    model.submit().ok()
}

/// The title: "SERVER asks", with the host and whether it is remote.
fn who_asks(origin: &Origin) -> String {
    let server = elicit_form::server_name(origin);
    let template = match (&origin.host, origin.remote) {
        (Some(_), false) => tr("{server} (for {host}) asks"),
        (Some(_), true) => tr("{server} (for {host}, remote) asks"),
        (None, true) => tr("{server} (remote) asks"),
        (None, false) => tr("{server} asks"),
    };
    let host = origin.host.clone().unwrap_or_default();
    fill(&template, &[("server", &server), ("host", &host)])
}

/// `message` cut to [`MAX_MESSAGE`] characters, at a word where one is
/// near, with an ellipsis.
fn short(message: &str) -> String {
    let message = message.trim();
    let Some((cut, _)) = message.char_indices().nth(MAX_MESSAGE) else {
        return message.to_owned();
    };
    let head = &message[..cut];
    let head = match head.rfind(char::is_whitespace) {
        Some(space) if space > cut / 2 => &head[..space],
        _ => head,
    };
    format!("{}…", head.trim_end())
}

/// Escapes text for a server that reads the body as markup: a message is
/// text, and `<b>` from a server must not become bold, nor `<a>` a link.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use elicit_proto::{ElicitationAction, Limits};
    use serde_json::json;

    use super::*;

    fn request(value: serde_json::Value) -> Elicitation {
        Elicitation::parse_str(&value.to_string(), &Limits::default()).expect("valid request")
    }

    fn origin() -> Origin {
        Origin {
            server: Some("deployer".into()),
            host: Some("Claude Code".into()),
            ..Origin::default()
        }
    }

    fn keys(card: &Card) -> Vec<&str> {
        card.actions.iter().map(|(k, _)| k.as_str()).collect()
    }

    #[test]
    fn a_confirmation_is_accept_or_decline() {
        let card = Card::new(
            &request(json!({"message": "Deploy?", "requestedSchema": {"type": "object", "properties": {}}})),
            &origin(),
            false,
        );
        assert_eq!(card.summary, "deployer (for Claude Code) asks");
        assert_eq!(card.body, "Deploy?");
        assert_eq!(keys(&card), [ACCEPT, DECLINE]);
        let Some(Reply::Answer(answer)) = card.reply(ACCEPT) else {
            panic!("accept answers")
        };
        assert_eq!(answer.action, ElicitationAction::Accept);
        assert_eq!(answer.content, Some(json!({})));
        assert_eq!(card.reply("default"), None);
    }

    #[test]
    fn a_small_choice_is_one_action_per_option() {
        let schema = json!({"type": "object", "properties": {"env": {"type": "string",
            "oneOf": [{"const": "dev", "title": "Development"}, {"const": "stage", "title": "Staging"},
                      {"const": "prod", "title": "Production"}]}}, "required": ["env"]});
        let card = Card::new(
            &request(json!({"message": "Where?", "requestedSchema": schema})),
            &origin(),
            false,
        );
        assert_eq!(keys(&card), ["option-0", "option-1", "option-2", DECLINE]);
        assert_eq!(card.actions[2].1, "Production");
        let Some(Reply::Answer(answer)) = card.reply("option-1") else {
            panic!("an option answers")
        };
        assert_eq!(answer.content, Some(json!({"env": "stage"})));
    }

    #[test]
    fn anything_richer_is_open_or_decline() {
        let four = json!({"type": "object", "properties": {"c": {"type": "string",
            "enum": ["a", "b", "c", "d"]}}});
        let two_fields = json!({"type": "object", "properties": {"a": {"type": "string", "title": "Name"},
            "b": {"type": "boolean"}}});
        for schema in [four, two_fields] {
            let card = Card::new(
                &request(json!({"message": "Fill <this> in", "requestedSchema": schema})),
                &origin(),
                true,
            );
            assert_eq!(keys(&card), [OPEN, DECLINE]);
            assert_eq!(card.reply(OPEN), Some(&Reply::PassOn));
            assert!(card.body.starts_with("Fill &lt;this&gt; in"), "{}", card.body);
        }
        let url = Card::new(
            &request(
                json!({"mode": "url", "message": "Sign in", "url": "https://example.com/login",
                "elicitationId": "e1"}),
            ),
            &origin(),
            false,
        );
        assert_eq!(keys(&url), [OPEN, DECLINE]);
        assert!(url.body.contains("example.com"), "{}", url.body);
    }

    #[test]
    fn a_long_message_is_cut_short() {
        let long = "word ".repeat(100);
        let card = Card::new(
            &request(json!({"message": long, "requestedSchema": {"type": "object", "properties": {}}})),
            &origin(),
            false,
        );
        assert!(card.body.ends_with("word…"), "{}", card.body);
        assert!(card.body.chars().count() <= MAX_MESSAGE + 1, "{}", card.body);
        let unbroken = "é".repeat(300);
        assert_eq!(short(&unbroken).chars().count(), MAX_MESSAGE + 1);
        assert_eq!(short("  Deploy?  "), "Deploy?");
    }

    #[test]
    fn a_url_cards_real_host_and_warnings_come_before_the_servers_message() {
        let fake = format!(
            "It wants you to open a page on accounts.google.com.{}",
            "\n".repeat(60)
        );
        let card = Card::new(
            &request(json!({"mode": "url", "message": fake, "elicitationId": "e1",
                "url": "https://p\u{430}ypal.com/login"})),
            &origin(),
            false,
        );
        let first: Vec<&str> = card.body.lines().take(3).collect();
        assert_eq!(
            first[0], "It wants you to open a page on xn--pypal-4ve.com.",
            "{}",
            card.body
        );
        assert!(
            first[1].starts_with("Careful: the host is an international name"),
            "{first:?}"
        );
        assert!(first[2].starts_with("Careful: “pаypal” mixes"), "{first:?}");
    }

    #[test]
    fn without_actions_the_card_says_where_to_answer() {
        let card = Card::without_actions(
            &request(json!({"message": "Deploy?", "requestedSchema": {"type": "object", "properties": {}}})),
            &origin(),
            false,
        );
        assert!(card.actions.is_empty() && card.action_list().is_empty());
        assert!(card.body.contains("elicit-tui"), "{}", card.body);
        assert_eq!(card.reply(ACCEPT), None);
    }
}
