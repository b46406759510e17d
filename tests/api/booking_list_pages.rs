//! `GET /api/bookings` answers at most 500 bookings per page with a
//! `nextCursor`, in one stable order (SPEC §20).

use reqwest::StatusCode;

use crate::helpers::*;

#[tokio::test]
async fn a_huge_window_of_bookings_comes_in_pages_of_at_most_500() {
    let app = TestApp::spawn().await;
    // 1,200 bookings, three at each start time (rooms A, B, C), so the order
    // must break ties by id.
    let first = chrono::DateTime::parse_from_rfc3339(&at(1, 0, 0)).unwrap().with_timezone(&chrono::Utc);
    app.db()
        .await
        .execute(
            "WITH slots AS (
               SELECT g, $1::timestamptz + (g / 3) * interval '30 minutes' AS s, (ARRAY['A','B','C'])[g % 3 + 1] AS room
                 FROM generate_series(0, 1199) g),
             made AS (
               INSERT INTO reservation (title, organizer_name, organizer_digest, starts_at, ends_at, created_at, updated_at, status)
               SELECT 'b' || g, 'o', 'd', s, s + interval '30 minutes', now(), now(), 'CONFIRMED' FROM slots
               RETURNING id, title, starts_at, ends_at)
             INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
             SELECT m.id, s.room, m.starts_at, m.ends_at, true FROM made m JOIN slots s ON m.title = 'b' || s.g",
            &[&first],
        )
        .await
        .unwrap();
    let window = format!("/api/bookings?from={}&to={}", urlencode(&at(1, 0, 0)), urlencode(&at(12, 0, 0)));
    let mut seen: Vec<(String, i64)> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = Vec::new();
    loop {
        let path = match &cursor {
            Some(c) => format!("{window}&cursor={c}"),
            None => window.clone(),
        };
        let (status, page) = app.get_json(&path, TENANT_ONE).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let bookings = page["bookings"].as_array().unwrap();
        assert!(bookings.len() <= 500, "one answer carried {} bookings", bookings.len());
        pages.push(bookings.len());
        seen.extend(bookings.iter().map(|b| (b["startsAt"].as_str().unwrap().to_owned(), b["id"].as_i64().unwrap())));
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
        assert!(pages.len() < 10, "pages never end");
    }
    assert_eq!(pages, [500, 500, 200]);
    let mut sorted = seen.clone();
    sorted.sort_by(|a, b| {
        let t = |s: &str| chrono::DateTime::parse_from_rfc3339(s).unwrap();
        (t(&a.0), a.1).cmp(&(t(&b.0), b.1))
    });
    sorted.dedup();
    assert_eq!(seen, sorted, "one stable order by start then id, nothing twice");
    // A forged cursor is refused, naming the field.
    let (status, err) = app.get_json(&format!("{window}&cursor=not-a-cursor"), TENANT_ONE).await;
    assert_eq!((status, err["details"]["field"].as_str()), (StatusCode::BAD_REQUEST, Some("cursor")), "{err}");
    // The document tells clients.
    let (_, doc) = app.get_json("/api/openapi.json", TENANT_ONE).await;
    let list = &doc["paths"]["/api/bookings"]["get"];
    assert!(list["parameters"].as_array().unwrap().iter().any(|p| p["name"] == "cursor"), "{list}");
}

fn urlencode(raw: &str) -> String {
    raw.replace('+', "%2B").replace(':', "%3A")
}
