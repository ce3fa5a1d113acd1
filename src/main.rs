fn main() {
    std::process::exit(rqps::cli::main());
}
