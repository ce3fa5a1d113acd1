//! Work spread over the machine's CPUs.

/// `f` of each item, in order, on up to 8 threads (the machine's CPUs):
/// for readers of many stored runs, whose time is parsing JSON. Each thread
/// takes one contiguous share.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8)
        .min(items.len().div_ceil(16))
        .max(1);
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let share = items.len().div_ceil(threads);
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = items
            .chunks(share)
            .map(|c| s.spawn(move || c.iter().map(f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}
