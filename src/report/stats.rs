//! The statistics a comparison needs, with no dependency: Student's t
//! distribution (through the regularized incomplete beta function), Welch's
//! t-test on log(QPS), geometric means and median/MAD outlier detection.

/// ln Γ(x) for x > 0 (Lanczos approximation, g = 7, nine coefficients; about
/// 15 significant digits), with the reflection formula below 0.5.
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Γ(x) Γ(1 − x) = π / sin(πx)
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).abs().ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The continued fraction of I_x(a, b), evaluated with the modified Lentz method.
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut f = d;
    for m in 1..=1000 {
        let m = m as f64;
        // Even step: d_2m = m (b − m) x / ((a + 2m − 1)(a + 2m)).
        let num = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 + num * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + num / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        f *= d * c;
        // Odd step: d_2m+1 = −(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
        let num = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 + num * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + num / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let step = d * c;
        f *= step;
        if (step - 1.0).abs() < EPS {
            break;
        }
    }
    f
}

/// The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 ≤ x ≤ 1.
pub fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    // The fraction converges fast for x < (a + 1)/(a + b + 2); otherwise use
    // the symmetry I_x(a, b) = 1 − I_{1−x}(b, a).
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom (df > 0, not necessarily whole).
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 1.0 } else { 0.0 };
    }
    // P(|T| > |t|) = I_{df/(df+t²)}(df/2, 1/2).
    let x = df / (df + t * t);
    let tail = 0.5 * inc_beta(df / 2.0, 0.5, x);
    if t > 0.0 { 1.0 - tail } else { tail }
}

/// The p-quantile of Student's t with `df` degrees of freedom (bisection on [`t_cdf`]).
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
    // Symmetric: solve for the upper half and mirror.
    let q = if p > 0.5 { p } else { 1.0 - p };
    let mut hi = 1.0;
    while t_cdf(hi, df) < q && hi < 1e300 {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid == lo || mid == hi {
            break;
        }
        if t_cdf(mid, df) < q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t = 0.5 * (lo + hi);
    if p > 0.5 { t } else { -t }
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

/// Welch's two-sample t-test of mean(x) − mean(y), with the 95 % confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Welch {
    pub diff: f64,
    pub se: f64,
    /// Welch–Satterthwaite degrees of freedom.
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
pub fn welch(x: &[f64], y: &[f64], level: f64) -> Option<Welch> {
    if x.len() < 2 || y.len() < 2 {
        return None;
    }
    let (nx, ny) = (x.len() as f64, y.len() as f64);
    let (vx, vy) = (variance(x) / nx, variance(y) / ny);
    let diff = mean(x) - mean(y);
    let se = (vx + vy).sqrt();
    if se == 0.0 {
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        return Some(Welch {
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
    Some(Welch {
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
    fn ln_gamma_known_values() {
        assert!(ln_gamma(1.0).abs() < 1e-13 && ln_gamma(2.0).abs() < 1e-13);
        assert!(close(ln_gamma(5.0), 24.0_f64.ln(), 1e-13));
        assert!(close(
            ln_gamma(0.5),
            std::f64::consts::PI.sqrt().ln(),
            1e-13
        ));
        assert!(close(ln_gamma(0.1), 2.252_712_651_734_205_5, 1e-12));
        assert!(close(ln_gamma(100.0), 359.134_205_369_575_4, 1e-13));
    }

    #[test]
    fn incomplete_beta_known_values() {
        // I_x(1, 1) = x; I_x(2, 2) = 3x² − 2x³; I_x(a, b) + I_{1−x}(b, a) = 1.
        assert!(close(inc_beta(1.0, 1.0, 0.3), 0.3, 1e-13));
        assert!(close(
            inc_beta(2.0, 2.0, 0.25),
            3.0 * 0.0625 - 2.0 * 0.015625,
            1e-13
        ));
        assert!(close(
            inc_beta(2.5, 0.5, 0.7) + inc_beta(0.5, 2.5, 0.3),
            1.0,
            1e-13
        ));
        // scipy.special.betainc(5, 0.5, 0.8)
        assert!(close(inc_beta(5.0, 0.5, 0.8), SCIPY_BETAINC_5_05_08, 1e-10));
    }

    // Independent reference values, from scipy 1.x (scipy.stats.t.ppf / t.cdf,
    // scipy.special.betainc), pasted as constants.
    const SCIPY_BETAINC_5_05_08: f64 = 0.14492760540408042;
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
