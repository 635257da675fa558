//! The account's default consistency level (`--consistency`), and the one
//! rule the service applies to a request's own level: it may relax the
//! account's, never strengthen it.

use clap::ValueEnum;

use crate::protocol::error::ApiError;

/// Cosmos DB's five consistency levels, strongest first (the order of the
/// variants is their strength).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum, Default)]
pub enum Consistency {
    Strong,
    #[value(alias = "boundedstaleness")]
    BoundedStaleness,
    /// The default of new accounts and of Microsoft's emulators.
    #[default]
    Session,
    #[value(alias = "consistentprefix")]
    ConsistentPrefix,
    Eventual,
}

const ALL: [Consistency; 5] = [
    Consistency::Strong,
    Consistency::BoundedStaleness,
    Consistency::Session,
    Consistency::ConsistentPrefix,
    Consistency::Eventual,
];

impl Consistency {
    /// The name the protocol uses (the account document's
    /// `defaultConsistencyLevel`, `x-ms-consistency-level`).
    pub fn name(self) -> &'static str {
        match self {
            Consistency::Strong => "Strong",
            Consistency::BoundedStaleness => "BoundedStaleness",
            Consistency::Session => "Session",
            Consistency::ConsistentPrefix => "ConsistentPrefix",
            Consistency::Eventual => "Eventual",
        }
    }

    /// The level a name means (any case), if it is one.
    pub fn named(text: &str) -> Option<Consistency> {
        ALL.into_iter()
            .find(|level| level.name().eq_ignore_ascii_case(text.trim()))
    }

    /// The level a request reads at: its own `x-ms-consistency-level`
    /// (already checked by the envelope), else the account's.
    pub fn for_request(self, requested: Option<&str>) -> Consistency {
        requested.and_then(Consistency::named).unwrap_or(self)
    }

    /// Checks a request's `x-ms-consistency-level` against the account's:
    /// a level stronger than the account's, or a name that is no level, is
    /// refused with the service's 400.
    pub fn check_request(self, requested: &str) -> Result<(), ApiError> {
        let Some(level) = Consistency::named(requested) else {
            return Err(ApiError::bad_request(format!(
                "Invalid value '{requested}' for header x-ms-consistency-level: expected Strong, \
                 BoundedStaleness, Session, ConsistentPrefix or Eventual."
            )));
        };
        if level < self {
            return Err(ApiError::bad_request(format!(
                "ConsistencyLevel {} specified in the request is invalid when service is \
                 configured with consistency level {}. Ensure the request consistency level is \
                 not stronger than the service consistency level.",
                level.name(),
                self.name()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Consistency;

    #[test]
    fn a_request_may_relax_the_account_level_but_not_strengthen_it() {
        let account = Consistency::Session;
        for relaxed in ["Session", "ConsistentPrefix", "Eventual", "eventual"] {
            assert!(account.check_request(relaxed).is_ok(), "{relaxed}");
        }
        for stronger in ["Strong", "BoundedStaleness"] {
            let refused = account.check_request(stronger).unwrap_err();
            assert_eq!(refused.status.as_u16(), 400);
            assert!(
                refused
                    .message
                    .starts_with(&format!("ConsistencyLevel {stronger} specified")),
                "{}",
                refused.message
            );
        }
        assert!(Consistency::Strong.check_request("Strong").is_ok());
        assert_eq!(
            account
                .check_request("Linearizable")
                .unwrap_err()
                .status
                .as_u16(),
            400
        );
    }

    #[test]
    fn the_flag_takes_the_protocol_names_in_any_case() {
        for (text, level) in [
            ("Strong", Consistency::Strong),
            ("BoundedStaleness", Consistency::BoundedStaleness),
            ("bounded-staleness", Consistency::BoundedStaleness),
            ("consistentprefix", Consistency::ConsistentPrefix),
            ("EVENTUAL", Consistency::Eventual),
        ] {
            assert_eq!(
                <Consistency as clap::ValueEnum>::from_str(text, true),
                Ok(level),
                "{text}"
            );
        }
    }
}
