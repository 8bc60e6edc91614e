//! Who a front-end is, as it registers with the broker.

use elicit_proto::dbus::Dict;
use zbus::zvariant::{OwnedValue, Str, Value};

/// Every kind of form: all three front-ends take all of them (what a
/// notification cannot hold, it hands on with "Open…").
pub const CAPABILITIES: &[&str] = &["form", "url", "confirm"];

/// A front-end's registration: its name, what it renders, its rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// The name the broker's preference list knows it by (`tui`, `gtk`…);
    /// also the last element of the path it serves `Frontend1` at.
    pub name: &'static str,
    /// What it can render: `form`, `url`, `confirm`.
    pub capabilities: &'static [&'static str],
    /// Its rank when the configuration names no preference: higher wins.
    pub priority: i32,
    /// Whether to watch the broker's forms for [`crate::Observer::backlog`]
    /// (`Broker1.Watch`); forms are shown without it.
    pub backlog: bool,
}

impl Profile {
    /// A front-end named `name` that renders every kind of form, ranked
    /// `priority`, without the backlog.
    pub const fn new(name: &'static str, priority: i32) -> Profile {
        Profile {
            name,
            capabilities: CAPABILITIES,
            priority,
            backlog: false,
        }
    }

    /// The same, watching the backlog.
    pub const fn with_backlog(self) -> Profile {
        Profile {
            backlog: true,
            ..self
        }
    }

    /// Where the front-end serves `dev.elicitd.Frontend1`.
    pub fn path(&self) -> String {
        format!("/dev/elicitd/frontend/{}", self.name)
    }

    /// The options of `OpenFrontend` and `ResumeFrontend`.
    pub(crate) fn options(&self) -> zbus::Result<Dict> {
        let mut options = Dict::new();
        options.insert("name".into(), OwnedValue::from(Str::from(self.name)));
        let capabilities = OwnedValue::try_from(Value::from(self.capabilities.to_vec()))?;
        options.insert("capabilities".into(), capabilities);
        options.insert("priority".into(), OwnedValue::from(self.priority));
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elicit_proto::dbus::{dict_str, dict_strings};

    #[test]
    fn options_name_the_front_end_and_what_it_renders() -> zbus::Result<()> {
        let profile = Profile::new("tui", 10).with_backlog();
        assert_eq!(profile.path(), "/dev/elicitd/frontend/tui");
        let options = profile.options()?;
        assert_eq!(dict_str(&options, "name").as_deref(), Some("tui"));
        assert_eq!(
            dict_strings(&options, "capabilities"),
            Some(vec!["form".into(), "url".into(), "confirm".into()])
        );
        assert_eq!(
            options.get("priority").and_then(|v| i32::try_from(v).ok()),
            Some(10)
        );
        Ok(())
    }
}
