//! What names a secret, and what makes a mention harmless, in the words
//! [`fold`](super::fold) produces.
//!
//! The lists are written as people write them; each entry is folded the
//! same way as the text it is compared with, so `Contraseña`, `mot de
//! passe` and `API key` need no spelling variants.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

#[cfg(test)]
use super::fold::fold;
use super::fold::{Folded, Word, compact};

/// Words and phrases that name a secret, matched as whole words (a phrase
/// also run together: "api key", "apiKey", "API_KEY", "apikey"), plural
/// endings allowed.
const TERMS: &[&str] = &[
    // English, with the usual abbreviations.
    "password",
    "passwd",
    "pwd",
    "pw",
    "passphrase",
    "pass phrase",
    "passcode",
    "secret",
    "client secret",
    "token",
    "api key",
    "api token",
    "access key",
    "secret key",
    "private key",
    "signing key",
    "encryption key",
    "bearer",
    "jwt",
    "credential",
    "credentials",
    "otp",
    "totp",
    "hotp",
    "2fa",
    "mfa",
    "one time code",
    "one time password",
    "verification code",
    "authentication code",
    "authenticator code",
    "sms code",
    "code we sent",
    "code we texted",
    "code we emailed",
    "auth code",
    "security code",
    "recovery code",
    "backup code",
    "recovery phrase",
    "seed phrase",
    "seed words",
    "mnemonic",
    "mnemonic phrase",
    "cvv",
    "cvv2",
    "cvc",
    "cvc2",
    "csc",
    "cc number",
    "cc no",
    "ccnum",
    "card number",
    "credit card",
    "debit card",
    "card verification",
    "ssn",
    "social security",
    "social insurance number",
    "national insurance number",
    "iban",
    "bank account number",
    // German.
    "passwort",
    "kennwort",
    "geheimzahl",
    "zugangsdaten",
    "zugangscode",
    "sicherheitscode",
    "bestätigungscode",
    "einmalpasswort",
    "einmalcode",
    "geheimer schlüssel",
    "privater schlüssel",
    "kartennummer",
    "kreditkarte",
    "kreditkartennummer",
    // French.
    "mot de passe",
    "mots de passe",
    "mdp",
    "code secret",
    "clé privée",
    "clé secrète",
    "clé api",
    "code de vérification",
    "code de sécurité",
    "phrase de récupération",
    "numéro de carte",
    "cryptogramme",
    "jeton",
    "identifiants",
    // Spanish.
    "contraseña",
    "clave de acceso",
    "clave secreta",
    "clave privada",
    "código de verificación",
    "código de seguridad",
    "número de tarjeta",
    "tarjeta de crédito",
    "frase semilla",
    "frase de recuperación",
    // Italian.
    "parola d'ordine",
    "chiave privata",
    "chiave segreta",
    "codice di verifica",
    "codice di sicurezza",
    "numero di carta",
    "numero della carta",
    "carta di credito",
    "codice segreto",
    // Portuguese.
    "senha",
    "palavra-passe",
    "chave privada",
    "chave secreta",
    "código de verificação",
    "código de segurança",
    "número do cartão",
    "cartão de crédito",
    "frase de recuperação",
    // Dutch.
    "wachtwoord",
    "toegangscode",
    "verificatiecode",
    "beveiligingscode",
    "geheime sleutel",
    "privésleutel",
    "kaartnummer",
    "herstelzin",
    // Polish.
    "hasło",
    "haslo",
    "hasła",
    "hasla",
    "kod weryfikacyjny",
    "kod bezpieczeństwa",
    "klucz prywatny",
    "numer karty",
    "fraza odzyskiwania",
    // Russian (the password itself is a prefix below, for its cases).
    "код подтверждения",
    "секретный ключ",
    "закрытый ключ",
    "приватный ключ",
    "номер карты",
    "токен",
    "сид фраза",
];

/// Word beginnings that name a secret in every grammatical case.
const PREFIXES: &[&str] = &["парол"];

/// Terms of scripts that do not separate words (Chinese, Japanese) or attach
/// particles to them (Korean), found anywhere in the text run together.
const RUN_TOGETHER: &[&str] = &[
    // Chinese, simplified and traditional.
    "密码",
    "密碼",
    "口令",
    "验证码",
    "驗證碼",
    "私钥",
    "私鑰",
    "助记词",
    "助記詞",
    "卡号",
    "卡號",
    "安全码",
    "安全碼",
    "令牌",
    // Japanese.
    "パスワード",
    "暗証番号",
    "認証コード",
    "確認コード",
    "秘密鍵",
    "カード番号",
    "セキュリティコード",
    "トークン",
    "ワンタイム",
    // Korean.
    "비밀번호",
    "암호",
    "패스워드",
    "인증번호",
    "인증코드",
    "개인키",
    "카드번호",
    "보안코드",
    "토큰",
    "복구문구",
];

/// Terms that count only in capitals: "PIN" (lower-case "pin" is mostly the
/// verb, "pin this message") and the German banking "TAN".
const CAPITALS: &[&str] = &["PIN", "TAN", "ПИН"];

/// A word right after a term that makes the mention about the secret, not
/// the secret itself: "token count", "password hint", "secret name".
const HARMLESS_AFTER: &[&str] = &[
    "count",
    "counts",
    "limit",
    "limits",
    "budget",
    "usage",
    "used",
    "generated",
    "remaining",
    "left",
    "per",
    "window",
    "length",
    "size",
    "name",
    "names",
    "id",
    "ids",
    "label",
    "type",
    "types",
    "hint",
    "hints",
    "policy",
    "policies",
    "rule",
    "rules",
    "requirement",
    "requirements",
    "strength",
    "reset",
    "expiry",
    "expiration",
    "expires",
    "expired",
    "age",
    "rotation",
    "change",
    "changed",
    "scope",
    "scopes",
    "santa",
    "manager",
    "generator",
    "holder",
    "issuer",
    "brand",
    "last4",
    "prefix",
    "symbol",
    "address",
    "amount",
    "contract",
    "method",
    "methods",
    "app",
    "device",
    "status",
    "enabled",
    "setting",
    "settings",
    "audience",
    "claim",
    "claims",
    "algorithm",
    "price",
    "cost",
    "file",
    "path",
    "vault",
    "store",
    "format",
    "richtlinie",
    "hinweis",
    "politique",
    "política",
    "politica",
    "beleid",
];

/// A word right before a term that does the same: "max tokens", "library
/// card number", "input tokens".
const HARMLESS_BEFORE: &[&str] = &[
    "max",
    "maximum",
    "min",
    "minimum",
    "total",
    "many",
    "fake",
    "sample",
    "dummy",
    "example",
    "library",
    "membership",
    "member",
    "loyalty",
    "student",
    "sim",
    "business",
    "input",
    "output",
    "prompt",
    "completion",
    "cached",
    "context",
    "reasoning",
];

/// "NAME for the … token", "length of your password": a mention that a
/// preposition ties to one of these nouns is about the secret.
const HEADS: &[&str] = &[
    "name",
    "label",
    "id",
    "identifier",
    "number",
    "count",
    "amount",
    "length",
    "size",
    "type",
    "kind",
    "hint",
    "policy",
    "description",
    "title",
    "expiry",
    "expiration",
    "scope",
    "scopes",
    "limit",
    "strength",
    "format",
    "age",
    "purpose",
    "owner",
    "issuer",
    "location",
    "path",
    "file",
    "bound",
    "days",
    "time",
    "politique",
    "política",
    "longueur",
    "longitud",
    "lunghezza",
    "comprimento",
    "lengte",
    "indice",
    "pista",
    "dica",
    "richtlinie",
    "länge",
];

/// The prepositions of [`HEADS`].
const PREPOSITIONS: &[&str] = &[
    "for", "of", "on", "until", "de", "du", "des", "di", "del", "della", "da", "do", "van", "voor", "für",
    "des",
];

/// How many words may stand between such a preposition and the term.
const HEAD_REACH: usize = 4;

/// "the secret is stored in Vault": a term that is the subject of one of
/// these verbs is spoken about, not asked for.
const LINKING: &[&str] = &["is", "are", "was", "were", "gets", "will", "be"];
const PARTICIPLES: &[&str] = &[
    "stored",
    "kept",
    "saved",
    "located",
    "generated",
    "rotated",
    "expired",
    "expiring",
    "used",
    "created",
    "mounted",
    "managed",
    "found",
    "reset",
    "changed",
    "revoked",
];

/// "How long …", "how many …": a question about a quantity of the term.
const QUANTITY: &[(&str, &[&str])] = &[("how", &["long", "many", "much", "often"])];

/// What may follow or precede a run-together term harmlessly: its policy,
/// hint, length, strength, count; at most so many tokens.
const RUN_TOGETHER_AFTER: &[&str] = &[
    "策略",
    "提示",
    "长度",
    "長度",
    "强度",
    "強度",
    "规则",
    "規則",
    "数",
    "數",
    "ポリシー",
    "ヒント",
    "の長さ",
    "の強度",
    "数",
    "정책",
    "힌트",
    "길이",
    "강도",
    "수",
];
const RUN_TOGETHER_BEFORE: &[&str] = &["最大", "最多", "최대"];

/// Plural and case endings a term may carry: "passwords", "Passwörter",
/// "wachtwoorden", "contraseñas", "secrète".
const ENDINGS: &[&str] = &["s", "es", "en", "er", "e"];

/// The most words one term spans ("national insurance number").
const MAX_WORDS: usize = 4;

/// The folded lists.
pub(crate) struct Lexicon {
    terms: HashMap<String, &'static str>,
    prefixes: Vec<(String, &'static str)>,
    run_together: Vec<(String, &'static str)>,
    capitals: Vec<(String, &'static str)>,
    after: HashSet<String>,
    before: HashSet<String>,
    heads: HashSet<String>,
    prepositions: HashSet<String>,
    linking: HashSet<String>,
    participles: HashSet<String>,
    quantity: Vec<(String, HashSet<String>)>,
    run_after: Vec<String>,
    run_before: Vec<String>,
}

/// The lexicon, folded once.
pub(crate) static LEXICON: LazyLock<Lexicon> = LazyLock::new(|| {
    let set = |list: &[&str]| list.iter().map(|w| compact(w)).collect::<HashSet<_>>();
    let pairs = |list: &[&'static str]| list.iter().map(|&w| (compact(w), w)).collect::<Vec<_>>();
    Lexicon {
        terms: TERMS.iter().map(|&t| (compact(t), t)).collect(),
        prefixes: pairs(PREFIXES),
        run_together: pairs(RUN_TOGETHER),
        capitals: CAPITALS.iter().map(|&t| (super::fold::shape(t), t)).collect(),
        after: set(HARMLESS_AFTER),
        before: set(HARMLESS_BEFORE),
        heads: set(HEADS),
        prepositions: set(PREPOSITIONS),
        linking: set(LINKING),
        participles: set(PARTICIPLES),
        quantity: QUANTITY
            .iter()
            .map(|(first, next)| (compact(first), set(next)))
            .collect(),
        run_after: RUN_TOGETHER_AFTER.iter().map(|w| compact(w)).collect(),
        run_before: RUN_TOGETHER_BEFORE.iter().map(|w| compact(w)).collect(),
    }
});

impl Lexicon {
    /// The first term in `text` that asks for a secret, ignoring mentions
    /// that only qualify something else.
    pub(crate) fn find(&self, text: &Folded) -> Option<&'static str> {
        self.find_words(&text.words)
            .or_else(|| self.find_run_together(&text.joined))
    }

    /// Whether `text` has a capitals-only term ("PIN") in capitals.
    pub(crate) fn capitals(&self, text: &Folded) -> Option<&'static str> {
        text.words.iter().find_map(|word| {
            self.capitals
                .iter()
                .find(|(shape, _)| *shape == word.shape)
                .map(|(_, term)| *term)
        })
    }

    fn find_words(&self, words: &[Word]) -> Option<&'static str> {
        let mut i = 0;
        let mut window = String::new();
        while i < words.len() {
            // The longest term at `i` decides, so that the harmless "secret
            // key name" is not caught again as "secret".
            let mut longest = None;
            window.clear();
            for (len, word) in words[i..].iter().take(MAX_WORDS).enumerate() {
                window.push_str(&word.folded);
                if let Some(term) = self.term(&window) {
                    longest = Some((len + 1, term));
                }
            }
            if longest.is_none() {
                longest = self
                    .prefixes
                    .iter()
                    .find(|(prefix, _)| words[i].folded.starts_with(prefix.as_str()))
                    .map(|(_, term)| (1, *term));
            }
            match longest {
                Some((len, term)) if !self.harmless(words, i, i + len) => return Some(term),
                Some((len, _)) => i += len,
                None => i += 1,
            }
        }
        None
    }

    /// The term `window` is, with or without a plural ending.
    fn term(&self, window: &str) -> Option<&'static str> {
        if let Some(term) = self.terms.get(window) {
            return Some(term);
        }
        ENDINGS.iter().find_map(|ending| {
            let stem = window.strip_suffix(ending)?;
            self.terms.get(stem).copied()
        })
    }

    /// Whether the term at `start..end` only qualifies something else.
    fn harmless(&self, words: &[Word], start: usize, end: usize) -> bool {
        let at = |i: usize| words.get(i).map(|w| w.folded.as_str());
        if at(end).is_some_and(|w| self.after.contains(w)) {
            return true;
        }
        if start > 0 && at(start - 1).is_some_and(|w| self.before.contains(w)) {
            return true;
        }
        let linked = at(end).is_some_and(|w| self.linking.contains(w))
            && (end + 1..=end + 2).any(|i| at(i).is_some_and(|w| self.participles.contains(w)));
        if linked {
            return true;
        }
        let asks_quantity = (start.saturating_sub(2 * HEAD_REACH)..start).any(|i| {
            self.quantity.iter().any(|(first, next)| {
                at(i) == Some(first.as_str()) && at(i + 1).is_some_and(|w| next.contains(w))
            })
        });
        if asks_quantity {
            return true;
        }
        (1..=HEAD_REACH).any(|distance| {
            let Some(prep) = start.checked_sub(distance) else {
                return false;
            };
            prep > 0
                && at(prep).is_some_and(|w| self.prepositions.contains(w))
                && at(prep - 1).is_some_and(|w| self.heads.contains(w))
        })
    }

    fn find_run_together(&self, joined: &str) -> Option<&'static str> {
        for (term_text, term) in &self.run_together {
            for (at, _) in joined.match_indices(term_text.as_str()) {
                let before = &joined[..at];
                let after = &joined[at + term_text.len()..];
                let harmless = self.run_after.iter().any(|w| after.starts_with(w.as_str()))
                    || self.run_before.iter().any(|w| before.ends_with(w.as_str()));
                if !harmless {
                    return Some(term);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(text: &str) -> Option<&'static str> {
        LEXICON.find(&fold(text))
    }

    #[test]
    fn every_term_folds_to_something() {
        for term in TERMS.iter().chain(PREFIXES).chain(RUN_TOGETHER) {
            assert!(!compact(term).is_empty(), "{term}");
        }
    }

    #[test]
    fn finds_terms_and_skips_qualified_mentions() {
        assert_eq!(find("Enter your password"), Some("password"));
        assert_eq!(find("API_KEY"), Some("api key"));
        assert_eq!(find("Passwörter"), Some("passwort"));
        assert_eq!(find("Введите пароль"), Some("парол"));
        assert_eq!(find("请输入您的密码"), Some("密码"));
        assert_eq!(find("token count"), None);
        assert_eq!(find("a name for the new access token"), None);
        assert_eq!(find("secret key name"), None);
        assert_eq!(find("密码策略"), None);
    }
}
