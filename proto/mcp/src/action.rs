//! The three outcomes of an elicitation as one word each, so that the bus,
//! JSON and every program spell them the same way.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::ElicitationAction;

/// What the user (or a rule) did with a form: the `action` of
/// `Broker1.Answer` and of an MCP elicitation result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Answered, with content in form mode.
    Accept,
    /// Refused to answer; the operation goes on without it.
    Decline,
    /// Dismissed without a choice.
    Cancel,
}

impl Action {
    /// Every action, in the order front-ends offer them.
    pub const ALL: [Action; 3] = [Action::Accept, Action::Decline, Action::Cancel];

    /// The word on the bus: `accept`, `decline` or `cancel`. A `const fn`
    /// so that other vocabularies built on it (notification action keys)
    /// stay constants.
    pub const fn as_str(self) -> &'static str {
        match self {
            Action::Accept => "accept",
            Action::Decline => "decline",
            Action::Cancel => "cancel",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that names no action.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
// `{0:?}`: the word comes from outside, and Debug escapes control
// characters before it can reach a terminal.
#[error("unknown action {0:?}: expected accept, decline or cancel")]
pub struct UnknownAction(pub String);

impl FromStr for Action {
    type Err = UnknownAction;

    fn from_str(word: &str) -> Result<Self, Self::Err> {
        Action::ALL
            .into_iter()
            .find(|action| action.as_str() == word)
            .ok_or_else(|| UnknownAction(word.to_owned()))
    }
}

impl From<&ElicitationAction> for Action {
    fn from(action: &ElicitationAction) -> Self {
        match action {
            ElicitationAction::Accept => Action::Accept,
            ElicitationAction::Decline => Action::Decline,
            // rmcp's enum is non-exhaustive: an outcome added later is
            // neither a yes nor a no, and cancel promises the least.
            _ => Action::Cancel,
        }
    }
}

impl From<ElicitationAction> for Action {
    fn from(action: ElicitationAction) -> Self {
        Action::from(&action)
    }
}

impl From<Action> for ElicitationAction {
    fn from(action: Action) -> Self {
        match action {
            Action::Accept => ElicitationAction::Accept,
            Action::Decline => ElicitationAction::Decline,
            Action::Cancel => ElicitationAction::Cancel,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_on_the_bus_and_in_json() {
        for action in Action::ALL {
            assert_eq!(action.to_string().parse::<Action>(), Ok(action));
            let json = serde_json::to_string(&action).unwrap_or_default();
            assert_eq!(json, format!("\"{action}\""));
            let rmcp = ElicitationAction::from(action);
            assert_eq!(Action::from(&rmcp), action);
            assert_eq!(serde_json::to_string(&rmcp).unwrap_or_default(), json);
        }
        assert_eq!("Accept".parse::<Action>(), Err(UnknownAction("Accept".into())));
    }
}
