//! Servers sized for the plan: what a plan opens on a server at most at once
//! ([`Need`], declared by its suite), what a server allows ([`Allowance`],
//! read by its driver), and the check between them that runs before
//! anything loads. A throwaway server is started with limits large enough
//! ([`sizing`]), unless the user's config sets them; a config that sets them
//! too low is refused before the server starts ([`check_config`]).

/// Connections rqps opens beside the plan's while a test runs: the probe
/// reads the server's status counters while the workers are connected.
pub const OWN_CONNECTIONS: usize = 1;

/// What a plan opens on a server at most at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Need {
    /// Connections open at once.
    pub connections: usize,
    /// Prepared statements open at once, over all its connections.
    pub prepared: usize,
    /// Who opens them, as a refusal names them: "64 requesters".
    pub who: String,
    /// What else the user can do: "run fewer requesters".
    pub fewer: String,
}

impl Need {
    /// Connections the server must accept: the plan's and rqps's own.
    pub fn total_connections(&self) -> usize {
        self.connections + OWN_CONNECTIONS
    }
}

/// What a server limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    Connections,
    PreparedStatements,
}

/// How much of a [`Resource`] a server allows this client now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allowance {
    pub resource: Resource,
    /// What this client may open.
    pub allows: u64,
    /// The setting that limits it, and what takes from it:
    /// "max_connections", "max_connections 100, 3 reserved for superusers, 12 in use".
    pub setting: String,
}

/// The plan needs more than the server allows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{who} need {wanted} {what}{own}; the server allows {allows} ({setting}): raise it, or {fewer}",
    what = .resource.words(),
    own = .resource.own_note()
)]
pub struct TooSmall {
    /// Who opens them: "64 requesters".
    pub who: String,
    pub wanted: u64,
    pub resource: Resource,
    pub allows: u64,
    /// The setting that allows it, and where it was set.
    pub setting: String,
    /// What else the user can do: "run fewer requesters".
    pub fewer: String,
}

impl Resource {
    /// As a refusal names it.
    fn words(self) -> &'static str {
        match self {
            Resource::Connections => "connections",
            Resource::PreparedStatements => "prepared statements",
        }
    }

    /// What rqps itself adds to the count, as words (or nothing).
    fn own_note(self) -> String {
        match self {
            Resource::Connections => format!(" (with rqps's own {OWN_CONNECTIONS})"),
            Resource::PreparedStatements => String::new(),
        }
    }
}

/// Checks `need` against what the server allows: the first shortfall, in one
/// line that says what to do.
pub fn check(need: &Need, allowances: &[Allowance]) -> Result<(), TooSmall> {
    for a in allowances {
        let wanted = match a.resource {
            Resource::Connections => need.total_connections() as u64,
            Resource::PreparedStatements => need.prepared as u64,
        };
        if wanted > a.allows {
            return Err(TooSmall {
                who: need.who.clone(),
                wanted,
                resource: a.resource,
                allows: a.allows,
                setting: a.setting.clone(),
                fewer: need.fewer.clone(),
            });
        }
    }
    Ok(())
}

/// A server setting rqps sets on a throwaway server so that the plan fits,
/// and what it counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizedSetting {
    pub name: &'static str,
    pub resource: Resource,
    /// The server's default: rqps writes the setting only above it.
    pub default: u64,
}

/// Room above the plan's count that a sized server keeps: a few sessions of
/// the user's own (psql, a monitoring query) while the plan runs.
pub const HEADROOM: u64 = 10;

/// The lines (`name = value`) that size a throwaway server with `settings`
/// for `need`: each setting whose default is too small and that the user's
/// `config` does not set.
pub fn sizing(settings: &[SizedSetting], need: &Need, config: &str) -> Vec<String> {
    settings
        .iter()
        .filter(|s| config_value(config, s.name).is_none())
        .filter_map(|s| {
            let want = wanted(s.resource, need) + HEADROOM;
            (want > s.default).then(|| format!("{} = {want}", s.name))
        })
        .collect()
}

fn wanted(r: Resource, need: &Need) -> u64 {
    match r {
        Resource::Connections => need.total_connections() as u64,
        Resource::PreparedStatements => need.prepared as u64,
    }
}

/// Refuses, before a throwaway server starts, a user's config that sets one
/// of `settings` too low for `need`.
pub fn check_config(settings: &[SizedSetting], need: &Need, config: &str) -> Result<(), TooSmall> {
    let allowances: Vec<Allowance> = settings
        .iter()
        .filter_map(|s| {
            let v = config_value(config, s.name)?;
            Some(Allowance {
                resource: s.resource,
                allows: v.parse().ok()?,
                setting: format!("{}, set by --config", s.name),
            })
        })
        .collect();
    check(need, &allowances)
}

/// The last value `config` gives `name` (`name = value`, `name=value`,
/// `-` and `_` alike, case-insensitive; comments and sections skipped).
pub fn config_value(config: &str, name: &str) -> Option<String> {
    let key = |k: &str| k.trim().to_ascii_lowercase().replace('-', "_");
    config
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && !l.starts_with(';') && !l.starts_with('['))
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| key(k) == name)
        .map(|(_, v)| {
            v.split('#')
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches(|c| c == '\'' || c == '"')
                .to_string()
        })
        .next_back()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requesters(n: usize) -> Need {
        Need {
            connections: 2 * n,
            prepared: 16 * 2 * n,
            who: format!("{n} requesters"),
            fewer: "run fewer requesters".into(),
        }
    }

    const PG: &[SizedSetting] = &[SizedSetting {
        name: "max_connections",
        resource: Resource::Connections,
        default: 100,
    }];
    const MARIADB: &[SizedSetting] = &[
        SizedSetting {
            name: "max_connections",
            resource: Resource::Connections,
            default: 151,
        },
        SizedSetting {
            name: "max_prepared_stmt_count",
            resource: Resource::PreparedStatements,
            default: 16382,
        },
    ];

    #[test]
    fn a_server_too_small_for_the_plan_is_refused_in_one_line_that_says_what_to_do() {
        let allows = |n| Allowance {
            resource: Resource::Connections,
            allows: n,
            setting: "max_connections".into(),
        };
        assert_eq!(
            check(&requesters(64), &[allows(100)])
                .unwrap_err()
                .to_string(),
            "64 requesters need 129 connections (with rqps's own 1); the server allows 100 (max_connections): raise it, or run fewer requesters"
        );
        assert_eq!(check(&requesters(64), &[allows(129)]), Ok(()));
        let stmts = Allowance {
            resource: Resource::PreparedStatements,
            allows: 1000,
            setting: "max_prepared_stmt_count".into(),
        };
        let e = check(&requesters(64), &[allows(500), stmts])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("64 requesters need 2048 prepared statements;"),
            "{e}"
        );
    }

    #[test]
    fn a_throwaway_server_is_sized_only_where_its_default_is_too_small_and_the_config_is_silent() {
        assert_eq!(sizing(PG, &requesters(64), ""), ["max_connections = 139"]);
        assert!(sizing(PG, &requesters(4), "").is_empty());
        // The user's config decides.
        assert!(sizing(PG, &requesters(64), "max_connections = 500\n").is_empty());
        assert_eq!(
            sizing(
                MARIADB,
                &requesters(600),
                "[mysqld]\nmax-connections=2000\n"
            ),
            ["max_prepared_stmt_count = 19210"]
        );
    }

    #[test]
    fn a_config_that_sets_a_limit_too_low_is_refused_and_one_high_enough_passes() {
        let e = check_config(
            PG,
            &requesters(64),
            "shared_buffers = 1GB\nmax_connections = 100 # ours\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("need 129 connections (with rqps's own 1); the server allows 100 (max_connections, set by --config)"),
            "{e}"
        );
        assert_eq!(
            check_config(PG, &requesters(64), "max_connections = 200"),
            Ok(())
        );
        assert_eq!(check_config(PG, &requesters(64), ""), Ok(()));
        // The last line that sets it wins, as in the servers' own files.
        assert!(
            check_config(
                PG,
                &requesters(64),
                "max_connections=500\nmax_connections='90'"
            )
            .is_err()
        );
    }
}
