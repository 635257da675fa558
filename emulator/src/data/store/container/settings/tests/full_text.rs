//! The full-text policy and full-text indexes in a container body.

use rstest::rstest;
use serde_json::{json, Value};

use super::*;

// ---- the full-text policy ---------------------------------------------------

#[rstest]
#[case::microsoft(full_text())]
#[case::default_language_alone(json!({"defaultLanguage": "en-US"}))]
#[case::path_without_language(json!({"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/abstract"}]}))]
#[case::paths_alone(json!({"fullTextPaths": [{"path": "/abstract"}, {"path": "/a/b", "language": "de-DE"}]}))]
#[case::any_case(json!({"defaultLanguage": "EN-us", "fullTextPaths": [{"path": "/t", "language": "Fr-fr"}]}))]
#[case::empty(json!({}))]
fn valid_full_text_policies_are_echoed_as_sent(#[case] policy: Value) {
    let settings = settings(json!({"fullTextPolicy": policy})).unwrap();
    assert_eq!(
        serde_json::to_string(&settings.extra["fullTextPolicy"]).unwrap(),
        serde_json::to_string(&policy).unwrap()
    );
}

#[rstest]
fn every_supported_language_is_accepted(
    #[values("en-US", "fr-FR", "de-DE", "it-IT", "pt-BR", "pt-PT", "es-ES")] language: &str,
) {
    let policy = json!({"defaultLanguage": language, "fullTextPaths": [{"path": "/t", "language": language}]});
    let read = FullTextPolicy::parse(Some(&policy)).unwrap();
    assert_eq!(read.language_for("/t"), language);
}

/// A language's Windows locale id is read as the language (the JavaScript
/// SDK's "validate full text search policy" sends "1033").
#[rstest]
#[case("1033", "en-US")]
#[case("1031", "de-DE")]
#[case("3082", "es-ES")]
fn a_locale_id_names_its_language(#[case] id: &str, #[case] language: &str) {
    let policy = json!({"fullTextPaths": [{"path": "/t", "language": id}]});
    let read = FullTextPolicy::parse(Some(&policy)).unwrap();
    assert_eq!(read.language_for("/t"), language);
    let unknown = json!({"fullTextPaths": [{"path": "/t", "language": "1049"}]});
    assert!(FullTextPolicy::parse(Some(&unknown)).is_err());
}

#[test]
fn a_path_speaks_its_own_language_else_the_default_else_english() {
    let policy = FullTextPolicy::parse(Some(&json!({
        "defaultLanguage": "fr-FR",
        "fullTextPaths": [{"path": "/de", "language": "de-DE"}, {"path": "/plain"}]
    })))
    .unwrap();
    assert_eq!(policy.default_language.as_deref(), Some("fr-FR"));
    assert_eq!(
        policy.paths,
        vec![
            FullTextPath {
                path: "/de".into(),
                language: Some("de-DE".into())
            },
            FullTextPath {
                path: "/plain".into(),
                language: None
            },
        ]
    );
    assert_eq!(policy.language_for("/de"), "de-DE");
    assert_eq!(policy.language_for("/plain"), "fr-FR");
    assert_eq!(policy.language_for("/elsewhere"), "fr-FR");
    let no_default =
        FullTextPolicy::parse(Some(&json!({"fullTextPaths": [{"path": "/t"}]}))).unwrap();
    assert_eq!(no_default.language_for("/t"), "en-US");
    assert_eq!(FullTextPolicy::default().language_for("/t"), "en-US");
}

#[rstest]
#[case::default_language(json!({"defaultLanguage": "spa-SPA", "fullTextPaths": [{"path": "/abstract", "language": "en-US"}]}),
    &["The Full Text Policy contains an unsupported language spa-SPA. Supported languages are:"][..])]
#[case::path_language(json!({"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/abstract", "language": "spa-SPA"}]}),
    &["The Full Text Policy contains an unsupported language spa-SPA. Supported languages are:"][..])]
#[case::empty_default(json!({"defaultLanguage": ""}), &["unsupported language . Supported languages are:"][..])]
#[case::language_not_a_string(json!({"fullTextPaths": [{"path": "/t", "language": 7}]}), &["unsupported language 7."][..])]
#[case::relative_path(json!({"defaultLanguage": "en-US", "fullTextPaths": [{"path": "abstract", "language": "en-US"}]}),
    &["The Full Text Policy contains an invalid Path: abstract", "'path'"][..])]
#[case::path_missing(json!({"fullTextPaths": [{"language": "en-US"}]}), &["invalid Path: (none)", "'path'"][..])]
#[case::not_an_object(json!("en-US"), &["'fullTextPolicy'", "object"][..])]
#[case::paths_not_a_list(json!({"fullTextPaths": "/abstract"}), &["'fullTextPaths'", "array"][..])]
fn invalid_full_text_policies_are_refused(#[case] policy: Value, #[case] needles: &[&str]) {
    let message = refused(json!({"fullTextPolicy": policy}));
    assert_contains(&message, needles);
    if message.contains("unsupported language") {
        for language in LANGUAGES {
            assert!(message.contains(language), "{language} in {message}");
        }
    }
}

// ---- full-text indexes ------------------------------------------------------

#[test]
fn full_text_indexes_are_echoed_as_sent() {
    let indexes = json!([{"path": "/abstract"}]);
    let settings = settings(json!({
        "fullTextPolicy": full_text(),
        "indexingPolicy": {"fullTextIndexes": indexes}
    }))
    .unwrap();
    assert_eq!(settings.indexing_policy["fullTextIndexes"], indexes);
    // An empty list needs no policy (the SDKs send one).
    let empty = settings_with_indexes(json!([]), None).unwrap();
    assert_eq!(empty.indexing_policy["fullTextIndexes"], json!([]));
}

fn settings_with_indexes(indexes: Value, policy: Option<Value>) -> ApiResult<ContainerSettings> {
    let mut fields = json!({"indexingPolicy": {"fullTextIndexes": indexes}});
    if let Some(policy) = policy {
        fields["fullTextPolicy"] = policy;
    }
    settings(fields)
}

#[rstest]
#[case::path_missing(json!([{"not_path": "abstract"}]), Some(full_text()),
    &["Missing path in full-text index specification at index (0)"][..])]
#[case::not_an_object(json!(["/abstract"]), Some(full_text()),
    &["Missing path in full-text index specification at index (0)"][..])]
#[case::relative_path(json!([{"path": "abstract"}]), Some(full_text()),
    &["Full-text index specification at index (0) contains invalid path"][..])]
#[case::not_in_the_policy(json!([{"path": "/abstract"}, {"path": "/path"}]), Some(full_text()),
    &["The path of the Full Text Index /path does not match the path specified in the Full Text Policy", "/abstract"][..])]
#[case::no_policy(json!([{"path": "/path"}]), None,
    &["The path of the Full Text Index /path does not match the path specified in the Full Text Policy"][..])]
#[case::second_entry(json!([{"path": "/abstract"}, {"path": "x"}]), Some(full_text()),
    &["at index (1) contains invalid path x"][..])]
fn invalid_full_text_indexes_are_refused(
    #[case] indexes: Value,
    #[case] policy: Option<Value>,
    #[case] needles: &[&str],
) {
    let e = settings_with_indexes(indexes, policy).unwrap_err();
    assert_eq!(e.status.as_u16(), 400);
    assert_contains(&e.message, needles);
}
