//! CSV cells that contain a separator, a quote or a line break are quoted,
//! and cells that start like a formula stay neutralised (SPEC §20).

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

async fn report(app: &TestApp, file: &str, day: &str) -> String {
    let url = app.url(&format!("/api/admin/reports/{file}?from={day}&to={day}"));
    let res = app.http.get(url).bearer_auth(ADMIN).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    res.text().await.unwrap()
}

#[tokio::test]
async fn csv_cells_with_separators_are_quoted_and_formulas_stay_defused() {
    let app = TestApp::spawn().await;
    let tomorrow = utc(&json!(at(1, 0, 0)));
    let titles = ["a;b", "=1+2;x", "-3", "@SUM(A1)", "+1", "plain", "쉼표, 있음"];
    for (i, t) in titles.iter().enumerate() {
        let mut b = booking(t, &["A"], &at(1, i as u32, 0), &at(1, i as u32, 30));
        b["organizerName"] = json!("김;민지");
        let (status, made) = body(app.create_booking(TENANT_ONE, "alice", &format!("c{i}"), &b).await).await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
    }
    // Rows written before titles refused control characters.
    app.db()
        .await
        .execute("UPDATE reservation SET title = E'\\tstart\\r\\nrow' WHERE title = 'plain'", &[])
        .await
        .unwrap();
    app.db().await.execute("UPDATE room SET name = '=cmd|x;y' WHERE code = 'A'", &[]).await.unwrap();
    let day = seoul_date(tomorrow);
    let bookings = report(&app, "bookings.csv", &day).await;
    for cell in [
        "\"a;b\"",
        "\"'=1+2;x\"",
        ",'-3,",
        ",'@SUM(A1),",
        ",'+1,",
        "\"쉼표, 있음\"",
        "\"'\tstart\r\nrow\"",
        ",\"김;민지\",",
    ] {
        assert!(bookings.contains(cell), "{cell:?} in {bookings}");
    }
    assert!(!bookings.contains(",a;b,") && !bookings.contains(",김;민지,"), "{bookings}");
    // Read back by a strict RFC 4180 reader: every cell whole, formulas inert.
    let rows: Vec<Vec<String>> = ::csv::ReaderBuilder::new()
        .from_reader(bookings.trim_start_matches('\u{feff}').as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    let cells: Vec<(&str, &str)> = rows.iter().map(|r| (r[4].as_str(), r[5].as_str())).collect();
    let expected = ["a;b", "'=1+2;x", "'-3", "'@SUM(A1)", "'+1", "'\tstart\r\nrow", "쉼표, 있음"];
    assert_eq!(cells, expected.iter().map(|t| (*t, "김;민지")).collect::<Vec<_>>());
    let utilisation = report(&app, "utilisation.csv", &day).await;
    assert!(utilisation.contains(",\"'=cmd|x;y\","), "{utilisation}");
}
