//! The built-in defaults: the secret guard against realistic forms, and the
//! URL-scheme rule.

mod common;

use common::{form, origin, text_field, url_request};
use elicit_proto::Elicitation;
use elicitd_policy::{Decision, Policy, Verdict};
use serde_json::json;

/// Built-in defaults only: no rules directories at all.
fn defaults(request: &Elicitation) -> Decision {
    let policy = Policy::load(&[]).expect("the built-in rules load");
    policy.decide(request, &origin("srv", None), "s")
}

fn field(name: &str, property: serde_json::Value) -> Elicitation {
    form(json!({"type": "object", "properties": {name: property}}))
}

/// (name, title, description) of fields that ask for a secret.
const SECRET: &[(&str, Option<&str>, Option<&str>)] = &[
    ("password", None, None),
    ("passwd", None, None),
    ("pwd_value", Some("Password"), None),
    (
        "new_password",
        Some("New password"),
        Some("At least 12 characters"),
    ),
    ("confirm", Some("Confirm your password"), None),
    (
        "value",
        Some("Passphrase"),
        Some("The passphrase of your SSH key"),
    ),
    (
        "db",
        Some("Database"),
        Some("Connection password for the production database"),
    ),
    ("apiKey", None, None),
    ("openai_api_key", Some("OpenAI API key"), None),
    ("key", Some("API Key"), Some("Find it under Settings → API")),
    ("x", Some("Key"), Some("Your API-key for the weather service")),
    ("token", None, None),
    (
        "github_token",
        Some("GitHub token"),
        Some("A personal access token with repo scope"),
    ),
    ("auth", Some("Bearer token"), None),
    ("slack", Some("Slack bot token"), Some("Starts with xoxb-")),
    ("refreshToken", None, None),
    ("client_secret", Some("Client secret"), None),
    ("aws", Some("AWS secret access key"), None),
    ("access_key", Some("Access key"), None),
    ("secret", None, None),
    ("pin", None, None),
    ("card_pin", Some("Card PIN"), None),
    ("code", Some("PIN"), Some("Your 4-digit PIN")),
    ("sim", Some("SIM PIN"), Some("The PIN of your SIM card")),
    ("card_number", Some("Card number"), None),
    ("cc", Some("Credit card"), Some("Visa or Mastercard")),
    ("payment", Some("Debit card number"), None),
    ("cvv", None, None),
    ("cvc", Some("CVC"), Some("The 3 digits on the back")),
    (
        "security_code",
        Some("Security code"),
        Some("3 or 4 digits on your card"),
    ),
    ("ssn", None, None),
    ("id", Some("Social security number"), None),
    ("sin", Some("Social insurance number"), None),
    ("otp", Some("One-time password"), None),
    (
        "code",
        Some("Verification code"),
        Some("We sent it to your phone"),
    ),
    ("mfa", Some("2FA code"), None),
    ("seed", Some("Seed phrase"), Some("Your 12 or 24 recovery words")),
    ("private_key", Some("Private key"), Some("PEM-encoded")),
    ("iban", Some("IBAN"), None),
    ("acct", Some("Bank account number"), None),
];

/// (name, title, description) of text fields that merely mention such words.
const HARMLESS: &[(&str, Option<&str>, Option<&str>)] = &[
    ("token_count", Some("Token count"), None),
    (
        "max_tokens",
        Some("Max tokens"),
        Some("Upper bound on tokens generated"),
    ),
    ("tokenLimit", Some("Token limit"), None),
    ("budget", Some("Token budget"), Some("How many tokens to spend")),
    ("api_version", Some("API version"), Some("e.g. 2024-10-01")),
    ("api_url", Some("API endpoint"), Some("The base URL of the API")),
    ("key_name", Some("Key name"), Some("A label for the new key")),
    ("sort_key", Some("Sort key"), None),
    (
        "secret_name",
        Some("Secret name"),
        Some("The name of the Kubernetes secret to mount"),
    ),
    (
        "exchange",
        Some("Secret Santa"),
        Some("Who do you draw for secret santa?"),
    ),
    ("hint", Some("Password hint"), None),
    (
        "policy",
        Some("Password policy"),
        Some("Minimum length and character classes"),
    ),
    (
        "pin_code",
        Some("PIN code"),
        Some("The PIN code of the post office"),
    ),
    ("postal", Some("Postal PIN code"), None),
    (
        "pin_message",
        Some("Message to pin"),
        Some("Which message should be pinned?"),
    ),
    ("username", Some("User name"), Some("Your login name")),
    ("email", Some("Email"), Some("We send a password reset link here")),
    (
        "description",
        Some("Description"),
        Some("Describe the change in a sentence"),
    ),
    ("card_holder", Some("Cardholder name"), None),
    ("library", Some("Library card number"), None),
    ("passport_country", Some("Country"), None),
    ("keyboard", Some("Keyboard layout"), None),
    ("repo", Some("Repository"), Some("owner/name on GitHub")),
    ("branch", Some("Branch"), Some("The branch to deploy")),
    (
        "token_name",
        Some("Token name"),
        Some("A name for the new access token"),
    ),
    ("region", Some("AWS region"), None),
    // The key id names the key; the secret is the other half.
    ("aws_access_key_id", Some("Access key ID"), None),
];

#[test]
fn secret_asking_fields_are_declined() {
    let mut missed = Vec::new();
    for (name, title, description) in SECRET {
        let decision = defaults(&text_field(name, *title, *description));
        if decision.verdict != Verdict::Decline {
            missed.push(format!("{name} / {title:?} / {description:?}: {decision:?}"));
            continue;
        }
        assert_eq!(decision.decided_by, "built-in: secret-guard");
        let reason = decision.reason.unwrap_or_default();
        assert!(
            reason.contains(&format!("\"{name}\"")) && reason.contains("secret"),
            "{reason}"
        );
    }
    assert!(missed.is_empty(), "not declined:\n{}", missed.join("\n"));
}

#[test]
fn harmless_fields_are_not_declined() {
    let mut alarms = Vec::new();
    for (name, title, description) in HARMLESS {
        let decision = defaults(&text_field(name, *title, *description));
        if decision.verdict != Verdict::Ask || decision.decided_by != "default" {
            alarms.push(format!("{name} / {title:?} / {description:?}: {decision:?}"));
        }
    }
    assert!(alarms.is_empty(), "false alarms:\n{}", alarms.join("\n"));
}

#[test]
fn secrets_in_number_fields_are_declined_too() {
    let decision = defaults(&field("pin", json!({"type": "integer", "title": "PIN"})));
    assert_eq!(decision.verdict, Verdict::Decline);
    let decision = defaults(&field("cvv", json!({"type": "number"})));
    assert_eq!(decision.verdict, Verdict::Decline);
}

#[test]
fn fields_that_cannot_carry_a_secret_pass() {
    let harmless = [
        json!({"type": "boolean", "title": "Remember my password?"}),
        json!({"type": "string", "title": "Token type", "enum": ["bearer", "basic"]}),
        json!({"type": "string", "format": "email", "title": "Email for the password reset"}),
        json!({"type": "string", "format": "date", "title": "Password expires on"}),
        json!({"type": "array", "title": "Secrets to rotate", "items": {"type": "string", "enum": ["db", "api key"]}}),
        json!({"type": "integer", "title": "Max tokens", "minimum": 1}),
    ];
    for property in harmless {
        let decision = defaults(&field("f", property.clone()));
        assert_eq!(decision.verdict, Verdict::Ask, "{property}: {decision:?}");
    }
}

#[test]
fn one_secret_field_among_harmless_ones_declines_the_form() {
    let request = form(json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "title": "User name"},
            "remember": {"type": "boolean"},
            "password": {"type": "string", "title": "Password"}
        }
    }));
    let decision = defaults(&request);
    assert_eq!(decision.verdict, Verdict::Decline);
    assert!(decision.reason.unwrap_or_default().contains("\"password\""));
}

#[test]
fn url_mode_allows_https_and_loopback_http_only() {
    for url in [
        "https://example.com/oauth",
        "http://localhost:8080/cb",
        "http://127.0.0.1/x",
        "http://[::1]:9/",
    ] {
        let decision = defaults(&url_request(url));
        assert_eq!(decision.verdict, Verdict::Ask, "{url}: {decision:?}");
    }
    for url in [
        "http://example.com/login",
        "http://127.evil.example/",
        "ftp://files.example.com/x",
        "javascript:alert(1)",
        "data:text/html,hi",
        "file:///etc/passwd",
    ] {
        let decision = defaults(&url_request(url));
        assert_eq!(decision.verdict, Verdict::Decline, "{url}: {decision:?}");
        assert_eq!(decision.decided_by, "50-elicitd-defaults.rhai: url-scheme");
    }
}

#[test]
fn a_plain_confirmation_goes_to_the_human() {
    let decision = defaults(&common::confirmation());
    assert_eq!(decision, Decision::default_ask());
}

#[test]
fn the_defaults_cope_with_the_largest_request_the_limits_allow() {
    // A server must not slip a secret past the guard by making the form too
    // big for the sandbox: the rule has to finish, not fail.
    let limits = elicit_proto::Limits::default();
    let choices: Vec<String> = (0..limits.max_choices).map(|i| format!("choice {i}")).collect();
    let long = "lorem ipsum dolor sit amet ".repeat(150);
    let mut properties = serde_json::Map::new();
    for i in 0..limits.max_properties - 1 {
        let property = if i % 2 == 0 {
            json!({"type": "string", "enum": choices, "description": "pick one"})
        } else {
            json!({"type": "string", "title": format!("Field {i}"), "description": long})
        };
        properties.insert(format!("field_{i}"), property);
    }
    properties.insert(
        "zz_password".into(),
        json!({"type": "string", "description": long}),
    );
    let params = json!({
        "message": "m".repeat(limits.max_message_bytes),
        "requestedSchema": {"type": "object", "properties": properties}
    });
    let size = params.to_string().len();
    assert!(
        size > limits.max_request_bytes * 3 / 4 && size <= limits.max_request_bytes,
        "{size}"
    );
    let request = common::request(params);
    let started = std::time::Instant::now();
    let decision = defaults(&request);
    assert_eq!(decision.verdict, Verdict::Decline, "{decision:?}");
    assert!(decision.reason.unwrap_or_default().contains("zz_password"));
    eprintln!("largest request decided in {:?}", started.elapsed());
}

#[test]
fn a_huge_description_does_not_hide_a_secret() {
    let limits = elicit_proto::Limits::default();
    let filler = "Please read all of this carefully before you type anything. ".repeat(3500);
    let description = format!("{filler} Then type your password.");
    let request = text_field("value", Some("Value"), Some(&description));
    assert!(request.raw.to_string().len() <= limits.max_request_bytes);
    let decision = defaults(&request);
    assert_eq!(decision.verdict, Verdict::Decline, "{:?}", decision.reason);
}
