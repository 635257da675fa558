//! The account's shape and its bad days, as `resolve` reads them: its
//! regions (`--regions`, `--multi-write`), serverless or provisioned
//! (`--serverless`), how requests are charged (`--ru-charges`) and whether
//! they are throttled (`--rate-limit`, `--burst-capacity`).

use super::vars::*;
use super::{choice, value, Env, Flags, Invalid, RuChargesArg};
use crate::protocol::request_units::ChargeModel;

/// What the account settings resolve to.
pub(super) struct Account {
    pub regions: Vec<String>,
    pub multi_write: bool,
    pub serverless: bool,
    pub charges: ChargeModel,
    pub rate_limit: bool,
    pub burst_capacity: bool,
}

/// Reads the account settings from `flags` and `env` (flags win).
pub(super) fn resolve(flags: &Flags, env: Env) -> Result<Account, Invalid> {
    let regions = flag_or_vars(
        flags.regions.clone(),
        "regions",
        env,
        &[COSMOS_EMULATOR_REGIONS],
        |v: &Var| v.parse(|t| Some(t.to_string()), "comma-separated region names"),
    )?;
    let regions: Vec<String> = value(regions)
        .map(|names| names.split(',').map(|n| n.trim().to_string()).collect())
        .unwrap_or_default();
    if let Err(why) = crate::account::regions::Topology::new(regions.clone(), false) {
        if !regions.is_empty() {
            return Err(Invalid(why));
        }
    }
    let multi_write = flag_or_vars(
        flags.multi_write,
        "multi-write",
        env,
        &[COSMOS_EMULATOR_MULTI_WRITE],
        Var::boolean,
    )?;
    let serverless = flag_or_vars(
        flags.serverless,
        "serverless",
        env,
        &[COSMOS_EMULATOR_SERVERLESS],
        Var::boolean,
    )?;
    let ru_charges = flag_or_vars(
        flags.ru_charges,
        "ru-charges",
        env,
        &[COSMOS_EMULATOR_RU_CHARGES],
        choice("expected documented or fixed"),
    )?;
    let rate_limit = flag_or_vars(
        flags.rate_limit,
        "rate-limit",
        env,
        &[COSMOS_EMULATOR_RATE_LIMIT],
        Var::boolean,
    )?;
    let burst_capacity = flag_or_vars(
        flags.burst_capacity,
        "burst-capacity",
        env,
        &[COSMOS_EMULATOR_BURST_CAPACITY],
        Var::boolean,
    )?;
    if value(burst_capacity.clone()) == Some(true) && value(rate_limit.clone()) != Some(true) {
        return Err(Invalid(
            "--burst-capacity needs --rate-limit: burst capacity is spent only when requests are \
             throttled"
                .into(),
        ));
    }
    Ok(Account {
        regions,
        multi_write: value(multi_write).unwrap_or(false),
        serverless: value(serverless).unwrap_or(false),
        charges: match value(ru_charges).unwrap_or(RuChargesArg::Documented) {
            RuChargesArg::Documented => ChargeModel::Documented,
            RuChargesArg::Fixed => ChargeModel::Fixed,
        },
        rate_limit: value(rate_limit).unwrap_or(false),
        burst_capacity: value(burst_capacity).unwrap_or(false),
    })
}
