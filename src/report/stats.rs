//! The statistics a comparison needs: Student's t (statrs), the moderated
//! t-test of limma (Smyth 2004) with its empirical-Bayes prior, Welch's
//! t-test, geometric means and median/MAD outlier detection.

use statrs::distribution::{ContinuousCDF, StudentsT};
use statrs::function::gamma::digamma;

/// P(T ≤ t) for Student's t with `df` degrees of freedom (df > 0, not necessarily whole).
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 1.0 } else { 0.0 };
    }
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |d| d.cdf(t))
}

/// The p-quantile of Student's t with `df` degrees of freedom.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p.is_nan() || df.is_nan() || df <= 0.0 || p <= 0.0 || p >= 1.0 {
        return match p {
            0.0 => f64::NEG_INFINITY,
            1.0 => f64::INFINITY,
            _ => f64::NAN,
        };
    }
    if p == 0.5 {
        return 0.0;
    }
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |d| d.inverse_cdf(p))
}

/// The trigamma function ψ′(x) = d² ln Γ(x) / dx² for x > 0: the recurrence
/// ψ′(x) = ψ′(x + 1) + 1/x² up to x ≥ 10, then the asymptotic series (statrs
/// has digamma but not trigamma).
pub fn trigamma(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return f64::NAN;
    }
    let mut x = x;
    let mut acc = 0.0;
    while x < 10.0 {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    // 1/x + 1/(2x²) + Σ B₂ₖ / x^(2k+1), Bernoulli numbers B₂..B₁₀.
    let z = 1.0 / (x * x);
    let series =
        1.0 / 6.0 - z * (1.0 / 30.0 - z * (1.0 / 42.0 - z * (1.0 / 30.0 - z * 5.0 / 66.0)));
    acc + 1.0 / x + z / 2.0 + series / (x * x * x)
}

/// The x > 0 with ψ′(x) = y (y > 0): ψ′ falls from ∞ to 0, so bisection on
/// ln x finds it.
pub fn trigamma_inverse(y: f64) -> f64 {
    if y.is_nan() || y <= 0.0 {
        return f64::NAN;
    }
    let (mut lo, mut hi) = ((1e-12f64).ln(), (1e15f64).ln());
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if trigamma(mid.exp()) > y {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (0.5 * (lo + hi)).exp()
}

pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance (n − 1 in the denominator); 0 for fewer than two values.
pub fn variance(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64
}

/// Geometric mean of positive values; `None` for an empty slice or a value ≤ 0.
pub fn geomean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty()
        || xs
            .iter()
            .any(|x| x.is_nan() || *x <= 0.0 || x.is_infinite())
    {
        return None;
    }
    Some(mean(&xs.iter().map(|x| x.ln()).collect::<Vec<_>>()).exp())
}

pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// A two-sample t-test of mean(x) − mean(y), with its confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TTest {
    pub diff: f64,
    pub se: f64,
    /// Degrees of freedom: Welch–Satterthwaite's, or the moderated test's d₀ + d.
    pub df: f64,
    pub t: f64,
    /// Two-sided p-value.
    pub p: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// Welch's t-test at confidence `level` (0.95 for a 95 % interval). Needs at
/// least two values on each side. When both samples have no spread, the
/// difference is exact: p is 0 for any difference and 1 for none.
pub fn welch(x: &[f64], y: &[f64], level: f64) -> Option<TTest> {
    if x.len() < 2 || y.len() < 2 {
        return None;
    }
    let (nx, ny) = (x.len() as f64, y.len() as f64);
    let (vx, vy) = (variance(x) / nx, variance(y) / ny);
    let diff = mean(x) - mean(y);
    let se = (vx + vy).sqrt();
    if se == 0.0 {
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        return Some(TTest {
            diff,
            se,
            df: nx + ny - 2.0,
            t: if diff == 0.0 {
                0.0
            } else {
                diff.signum() * f64::INFINITY
            },
            p,
            ci_low: diff,
            ci_high: diff,
        });
    }
    let df = (vx + vy).powi(2) / (vx * vx / (nx - 1.0) + vy * vy / (ny - 1.0));
    let t = diff / se;
    let p = (2.0 * t_cdf(-t.abs(), df)).min(1.0);
    let q = t_quantile(0.5 + level / 2.0, df);
    Some(TTest {
        diff,
        se,
        df,
        t,
        p,
        ci_low: diff - q * se,
        ci_high: diff + q * se,
    })
}

/// The prior of the moderated t-test: the sample variances of the tests of
/// one comparison are taken as scaled inverse-χ² draws around `var` with
/// `df` degrees of freedom (Smyth 2004, §6.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prior {
    /// d₀; infinite when the variances scatter no more than sampling explains.
    pub df: f64,
    /// s₀², the variance the tests' own variances shrink toward.
    pub var: f64,
    /// The residual degrees of freedom of all the tests together: the
    /// moderated test's degrees of freedom never exceed them.
    pub df_total: f64,
}

/// Fits the [`Prior`] to `(s², d)` pairs (each test's pooled sample variance
/// and residual degrees of freedom) by the method of moments on ln s²
/// (Smyth 2004, §6.2): e = ln s² − ψ(d/2) + ln(d/2) has the mean
/// ln s₀² − ψ(d₀/2) + ln(d₀/2) and the variance ψ′(d₀/2) + ψ′(d/2). Variances of 0 are
/// raised to 10⁻⁵ × the median. `None` with fewer than three tests, or when
/// the median variance is 0.
pub fn fit_prior(tests: &[(f64, f64)]) -> Option<Prior> {
    let tests: Vec<(f64, f64)> = tests
        .iter()
        .copied()
        .filter(|(v, d)| v.is_finite() && *v >= 0.0 && *d > 0.0)
        .collect();
    if tests.len() < 3 {
        return None;
    }
    let med = median(&tests.iter().map(|t| t.0).collect::<Vec<_>>());
    if med <= 0.0 {
        return None;
    }
    let e: Vec<f64> = tests
        .iter()
        .map(|(v, d)| v.max(1e-5 * med).ln() - digamma(d / 2.0) + (d / 2.0).ln())
        .collect();
    let g = e.len() as f64;
    let e_mean = mean(&e);
    let spread = e.iter().map(|x| (x - e_mean).powi(2)).sum::<f64>() / (g - 1.0)
        - tests.iter().map(|(_, d)| trigamma(d / 2.0)).sum::<f64>() / g;
    let df_total = tests.iter().map(|t| t.1).sum();
    Some(if spread > 0.0 {
        let df = 2.0 * trigamma_inverse(spread);
        Prior {
            df,
            var: (e_mean + digamma(df / 2.0) - (df / 2.0).ln()).exp(),
            df_total,
        }
    } else {
        Prior {
            df: f64::INFINITY,
            var: e_mean.exp(),
            df_total,
        }
    })
}

/// The pooled sample variance of two samples and its degrees of freedom
/// (nx + ny − 2); `None` unless each has at least two values.
pub fn pooled_variance(x: &[f64], y: &[f64]) -> Option<(f64, f64)> {
    if x.len() < 2 || y.len() < 2 {
        return None;
    }
    let ss = |v: &[f64]| variance(v) * (v.len() - 1) as f64;
    let d = (x.len() + y.len() - 2) as f64;
    Some(((ss(x) + ss(y)) / d, d))
}

/// The moderated t-test of mean(x) − mean(y) at confidence `level` (limma,
/// Smyth 2004): the pooled variance s² (d degrees of freedom) is shrunk
/// toward the prior's, s̃² = (d₀ s₀² + d s²) / (d₀ + d), and t = diff / (s̃
/// √(1/nx + 1/ny)) has d₀ + d degrees of freedom. Without a prior it is the
/// classic pooled two-sample t-test. Needs two values on each side; with no
/// spread at all the difference is exact.
///
/// One departure from limma: d₀ counts for at most d, so the pool never
/// weighs more than the test's own repeats. Smyth's prior assumes the
/// tests' variances scatter like scaled inverse-χ² draws; a run's tests
/// differ more systematically (a write test is noisier than a point select),
/// and with two repeats a side 30 tests measure that scatter so poorly that
/// about one run pair in six gets d₀ = ∞, judging a 4 % test by a 2 % pool.
/// In issue 16's simulation (compare.rs) the cap brings false flags from
/// 5.7 % down to under 4 % and keeps −10 % drops caught in nearly 90 % of pairs.
pub fn moderated(x: &[f64], y: &[f64], prior: Option<&Prior>, level: f64) -> Option<TTest> {
    let (s2, d) = pooled_variance(x, y)?;
    let (nx, ny) = (x.len() as f64, y.len() as f64);
    let diff = mean(x) - mean(y);
    let (var, df) = match prior {
        Some(p) => {
            let d0 = p.df.min(d);
            (
                (d0 * p.var + d * s2) / (d0 + d),
                (d0 + d).min(p.df_total.max(d)),
            )
        }
        None => (s2, d),
    };
    let se = (var * (1.0 / nx + 1.0 / ny)).sqrt();
    if se == 0.0 {
        return Some(TTest {
            diff,
            se,
            df,
            t: if diff == 0.0 {
                0.0
            } else {
                diff.signum() * f64::INFINITY
            },
            p: if diff == 0.0 { 1.0 } else { 0.0 },
            ci_low: diff,
            ci_high: diff,
        });
    }
    let t = diff / se;
    let p = (2.0 * t_cdf(-t.abs(), df)).min(1.0);
    let q = t_quantile(0.5 + level / 2.0, df);
    Some(TTest {
        diff,
        se,
        df,
        t,
        p,
        ci_low: diff - q * se,
        ci_high: diff + q * se,
    })
}

/// Indexes of outliers by the modified z-score 0.6745 (x − median) / MAD,
/// flagged when |z| > `threshold` (3.5 is Iglewicz and Hoaglin's choice). When
/// the MAD is 0 (most values equal), the mean absolute deviation × 1.253314
/// stands in for 1.4826 × MAD, so one differing value among equal ones is
/// still caught. The MAD is floored at `min_mad`: with three repeats it is the
/// smaller of two deviations, so two near-equal repeats would otherwise make
/// any third one an outlier. Needs at least three values.
pub fn outliers(xs: &[f64], threshold: f64, min_mad: f64) -> Vec<usize> {
    if xs.len() < 3 {
        return Vec::new();
    }
    let m = median(xs);
    let dev: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    let mad = median(&dev);
    // The robust standard deviation: 1.4826 × MAD = MAD / 0.6745.
    let sigma = if mad > 0.0 {
        mad / 0.6745
    } else {
        1.253_314 * mean(&dev)
    };
    let sigma = sigma.max(min_mad / 0.6745);
    if sigma == 0.0 {
        return Vec::new();
    }
    dev.iter()
        .enumerate()
        .filter(|(_, d)| **d / sigma > threshold)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    #[test]
    fn trigamma_and_its_inverse_match_known_values() {
        let pi2 = std::f64::consts::PI.powi(2);
        assert!(close(trigamma(1.0), pi2 / 6.0, 1e-12));
        assert!(close(trigamma(0.5), pi2 / 2.0, 1e-12));
        // ψ′(x) = ψ′(x + 1) + 1/x², across the switch to the series at 10.
        for x in [0.05, 0.7, 3.3, 9.5, 10.0, 40.0] {
            assert!(close(trigamma(x), trigamma(x + 1.0) + 1.0 / (x * x), 1e-12));
        }
        // scipy.special.polygamma(1, 2.5)
        assert!(close(trigamma(2.5), 0.4903577561002349, 1e-12));
        for x in [0.01, 0.8, 2.0, 17.0, 3000.0] {
            assert!(close(trigamma_inverse(trigamma(x)), x, 1e-9));
        }
        assert!(trigamma(0.0).is_nan() && trigamma_inverse(-1.0).is_nan());
    }

    // Independent reference values, from scipy 1.x (scipy.stats.t.ppf / t.cdf,
    // scipy.special.polygamma), pasted as constants.
    const T_PPF: &[(f64, f64, f64)] = &[
        // (p, df, quantile)
        (0.975, 1.0, 12.706204736174694),
        (0.975, 2.5, 3.5746548420036817),
        (0.975, 4.0, 2.7764451051977934),
        (0.975, 10.0, 2.228138851986274),
        (0.975, 30.0, 2.0422724563012378),
        (0.975, 1000.0, 1.9623390808264083),
        (0.95, 3.0, 2.3533634348018233),
        (0.995, 7.3, 3.451031655622185),
        (0.025, 4.0, -2.7764451051977943),
    ];
    const T_CDF: &[(f64, f64, f64)] = &[
        // (t, df, P(T <= t))
        (2.0, 3.0, 0.9303370157205785),
        (-1.5, 2.5, 0.12391822654314809),
        (0.3, 1.0, 0.5927735790777423),
        (4.2, 12.7, 0.9994539814714879),
        (-6.0, 5.0, 0.0009230691447970072),
    ];

    #[test]
    fn student_t_quantiles_match_reference_values() {
        for &(p, df, want) in T_PPF {
            let got = t_quantile(p, df);
            assert!(
                close(got, want, 1e-9),
                "t({p}, df={df}) = {got}, want {want}"
            );
        }
        // The textbook table, three decimals (t(0.975, 4) = 2.776, t(0.975, 10) = 2.228).
        assert_eq!(format!("{:.3}", t_quantile(0.975, 4.0)), "2.776");
        assert_eq!(format!("{:.3}", t_quantile(0.975, 10.0)), "2.228");
        assert_eq!(t_quantile(0.5, 3.0), 0.0);
    }

    #[test]
    fn student_t_cdf_matches_reference_values() {
        for &(t, df, want) in T_CDF {
            let got = t_cdf(t, df);
            assert!(
                close(got, want, 1e-9),
                "cdf({t}, df={df}) = {got}, want {want}"
            );
        }
        assert_eq!(t_cdf(0.0, 7.0), 0.5);
    }

    #[test]
    fn welch_matches_reference_values() {
        // scipy.stats.ttest_ind(x, y, equal_var=False) on these samples, and the
        // interval from the Welch–Satterthwaite df with scipy.stats.t.ppf.
        let x = [10.2, 11.1, 9.8, 10.7];
        let y = [9.1, 9.4, 8.9];
        let w = welch(&x, &y, 0.95).unwrap();
        assert!(close(w.diff, WELCH_DIFF, 1e-12), "{w:?}");
        assert!(close(w.t, WELCH_T, 1e-10), "{w:?}");
        assert!(close(w.df, WELCH_DF, 1e-10), "{w:?}");
        assert!(close(w.p, WELCH_P, 1e-8), "{w:?}");
        assert!(close(w.ci_low, WELCH_CI.0, 1e-8), "{w:?}");
        assert!(close(w.ci_high, WELCH_CI.1, 1e-8), "{w:?}");
    }

    #[test]
    fn welch_on_log_qps_gives_ratio_interval() {
        let base = [1000.0f64, 1010.0, 990.0];
        let target = [900.0f64, 915.0, 905.0];
        let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<_>>();
        let w = welch(&ln(&target), &ln(&base), 0.95).unwrap();
        assert!(close(w.diff.exp(), LOG_RATIO, 1e-12), "{w:?}");
        assert!(close(w.p, LOG_P, 1e-8), "{w:?}");
        assert!(close(w.ci_low.exp(), LOG_CI.0, 1e-8), "{w:?}");
        assert!(close(w.ci_high.exp(), LOG_CI.1, 1e-8), "{w:?}");
    }

    const WELCH_DIFF: f64 = 1.3166666666666664;
    const WELCH_T: f64 = 4.123766432677858;
    const WELCH_DF: f64 = 4.328748192190264;
    const WELCH_P: f64 = 0.01237361850052535;
    const WELCH_CI: (f64, f64) = (0.45611317553084474, 2.177220157802488);
    const LOG_RATIO: f64 = 0.9066754811518772;
    const LOG_P: f64 = 0.00024102685507943047;
    const LOG_CI: (f64, f64) = (0.8876626594682488, 0.9260955379315386);

    #[test]
    fn welch_edge_cases() {
        assert!(welch(&[1.0], &[1.0, 2.0], 0.95).is_none());
        let same = welch(&[2.0, 2.0], &[2.0, 2.0], 0.95).unwrap();
        assert_eq!((same.p, same.diff), (1.0, 0.0));
        let exact = welch(&[3.0, 3.0], &[2.0, 2.0], 0.95).unwrap();
        assert_eq!((exact.p, exact.ci_low, exact.ci_high), (0.0, 1.0, 1.0));
    }

    #[test]
    fn moderated_without_a_prior_is_the_pooled_t_test() {
        let x = [10.2, 11.1, 9.8, 10.7];
        let y = [9.1, 9.4, 8.9];
        let m = moderated(&x, &y, None, 0.95).unwrap();
        // Pooled variance (3 × var(x) + 2 × var(y)) / 5 on 5 degrees of freedom.
        let s2 = (3.0 * variance(&x) + 2.0 * variance(&y)) / 5.0;
        let se = (s2 * (1.0 / 4.0 + 1.0 / 3.0)).sqrt();
        assert_eq!(m.df, 5.0);
        assert!(close(m.se, se, 1e-12) && close(m.t, WELCH_DIFF / se, 1e-12));
        // t(0.975, 5) = 2.5705818366147395 (scipy.stats.t.ppf).
        assert!(close(m.ci_high - m.diff, 2.5705818366147395 * se, 1e-9));
        assert!(close(m.p, 2.0 * t_cdf(-m.t, 5.0), 1e-12));
        assert!(moderated(&[1.0], &[1.0, 2.0], None, 0.95).is_none());
    }

    #[test]
    fn prior_fit_recovers_the_variance_distribution_it_was_drawn_from() {
        use rand::SeedableRng;
        use rand::rngs::SmallRng;
        use rand_distr::{ChiSquared, Distribution};
        // σ² = d₀ s₀² / χ²(d₀), s² = σ² χ²(d) / d: the model of Smyth 2004.
        let (d0, s0, d) = (4.0, 1e-3, 2.0);
        let mut rng = SmallRng::seed_from_u64(7);
        let (c0, c) = (ChiSquared::new(d0).unwrap(), ChiSquared::new(d).unwrap());
        let tests: Vec<(f64, f64)> = (0..4000)
            .map(|_| {
                let sigma2 = d0 * s0 / c0.sample(&mut rng);
                (sigma2 * c.sample(&mut rng) / d, d)
            })
            .collect();
        let p = fit_prior(&tests).unwrap();
        assert!((3.2..5.0).contains(&p.df), "{p:?}");
        assert!((0.85e-3..1.15e-3).contains(&p.var), "{p:?}");
        assert_eq!(p.df_total, 8000.0);
        // Variances that scatter less than sampling explains: d₀ = ∞, and
        // s₀² = exp(E[ln s²] − ψ(1)), since E[ln s²] = ln σ² + ψ(1) at d = 2.
        let same = fit_prior(&[(1e-3, 2.0), (1e-3, 2.0), (1e-3, 2.0)]).unwrap();
        let euler_gamma = 0.577_215_664_901_532_9_f64;
        assert!(same.df.is_infinite(), "{same:?}");
        assert!(close(same.var, 1e-3 * euler_gamma.exp(), 1e-12), "{same:?}");
        assert!(fit_prior(&[(1e-3, 2.0), (2e-3, 2.0)]).is_none());
        assert!(fit_prior(&[(0.0, 2.0), (0.0, 2.0), (1e-3, 2.0)]).is_none());
    }

    #[test]
    fn moderated_variance_lies_between_the_tests_own_and_the_prior() {
        let prior = Prior {
            df: 1.5,
            var: 1e-4,
            df_total: 60.0,
        };
        // A test whose own variance is tiny: shrunk up toward the prior.
        let x = [0.0, 0.0001];
        let y = [0.1, 0.1001];
        let own = moderated(&x, &y, None, 0.95).unwrap();
        let m = moderated(&x, &y, Some(&prior), 0.95).unwrap();
        assert!(m.se > own.se && m.df == 3.5, "{m:?}");
        let s2 = (1.5 * 1e-4 + 2.0 * pooled_variance(&x, &y).unwrap().0) / 3.5;
        assert!(close(m.se, (s2 * (1.0 / 2.0 + 1.0 / 2.0)).sqrt(), 1e-12));
        assert!(m.ci_low.is_finite() && m.ci_high.is_finite());
        // d₀ = ∞ (or any d₀ above the test's own d = 2) counts as d₀ = 2.
        for d0 in [f64::INFINITY, 40.0] {
            let big = Prior { df: d0, ..prior };
            let m = moderated(&x, &y, Some(&big), 0.95).unwrap();
            let s2 = (2.0 * 1e-4 + 2.0 * pooled_variance(&x, &y).unwrap().0) / 4.0;
            assert!(close(m.se, (s2 * (1.0 / 2.0 + 1.0 / 2.0)).sqrt(), 1e-12));
            assert_eq!(m.df, 4.0, "{m:?}");
        }
    }

    #[test]
    fn geomean_and_median() {
        assert!(close(geomean(&[1.0, 4.0]).unwrap(), 2.0, 1e-14));
        assert!(close(geomean(&[2.0, 8.0, 4.0]).unwrap(), 4.0, 1e-14));
        assert_eq!(geomean(&[]), None);
        assert_eq!(geomean(&[1.0, 0.0]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn mad_outliers() {
        // median 100, MAD 2: z(140) = 0.6745 × 40 / 2 = 13.5.
        assert_eq!(
            outliers(&[100.0, 98.0, 102.0, 140.0, 101.0], 3.5, 0.0),
            vec![3]
        );
        assert!(outliers(&[100.0, 98.0, 102.0, 104.0, 101.0], 3.5, 0.0).is_empty());
        // MAD 0: the mean absolute deviation stands in (z(60) = 40 / 16.7 = 2.4).
        assert!(outliers(&[100.0, 100.0, 60.0], 3.5, 0.0).is_empty());
        assert_eq!(
            outliers(&[100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 50.0], 3.5, 0.0),
            vec![6]
        );
        assert!(outliers(&[5.0, 5.0, 5.0], 3.5, 0.0).is_empty());
        assert!(outliers(&[1.0, 100.0], 3.5, 0.0).is_empty());
        // Three repeats, two near-equal: MAD 0.2, so 103 has z = 10 ...
        assert_eq!(outliers(&[100.0, 100.2, 103.0], 3.5, 0.0), vec![2]);
        // ... but not once the MAD is floored at 1 % of the median,
        assert!(outliers(&[100.0, 100.2, 103.0], 3.5, 1.0).is_empty());
        // while a 40 % jump still is.
        assert_eq!(outliers(&[100.0, 100.2, 140.0], 3.5, 1.0), vec![2]);
    }
}
