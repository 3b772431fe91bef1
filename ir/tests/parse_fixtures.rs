//! Every `.mlir` fixture (jax / torch_xla output, golden CLI inputs, the op corpus)
//! parses. Chunks named `parse_only_dynamic*` must fail with the dynamic-shape
//! diagnostic; chunks with `expected-error {{text}}` annotations may fail to parse, but
//! then the message must contain one of the annotated texts.

mod common;

#[test]
fn all_fixtures_parse() {
    let mut failures = Vec::new();
    let chunks = common::chunks();
    assert!(!chunks.is_empty());
    for c in &chunks {
        let r = neuronc_ir::parse_module(&c.text);
        let expected = c.expected_errors();
        match r {
            Err(e) if c.expect_dynamic_error() => {
                assert!(
                    e.0.message.contains("dynamic"),
                    "{}: {}",
                    c.name(),
                    e.0.message
                )
            }
            Ok(_) if c.expect_dynamic_error() => {
                failures.push(format!("{}: dynamic shapes accepted", c.name()))
            }
            Err(e) if expected.iter().any(|x| e.0.message.contains(x.as_str())) => {}
            Err(_) if c.malformed => {}
            Ok(_) if c.malformed => {
                failures.push(format!("{}: malformed input accepted", c.name()))
            }
            Ok(_) => {}
            Err(e) => {
                let s = e.0.span.start as usize;
                let line = c.text[..s.min(c.text.len())].matches('\n').count() + 1;
                failures.push(format!("{}:{line}: {}", c.name(), e.0.message));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} chunks failed:\n{}",
        failures.len(),
        chunks.len(),
        failures.join("\n")
    );
}
