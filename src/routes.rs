//! Every route of the server, browser pages and JSON API, in one table:
//! the doors are toolkits (`http`, `web`) and capabilities, and this file is
//! the only one that knows them all. `main` and the tests build the app
//! from [`configure`].

use actix_web::http::Method;
use actix_web::web::{self as aw, get, post, ServiceConfig};
use actix_web::HttpResponse;

use crate::error::ApiError;
use crate::http::openapi::{Api, Op, Tag};
use crate::{http, web};

/// Registers every route.
pub fn configure(cfg: &mut ServiceConfig) {
    cfg.app_data(aw::PathConfig::default().error_handler(|_, _| ApiError::not_found("resource").into()))
        .app_data(
            aw::QueryConfig::default().error_handler(|err, _| ApiError::malformed("query", err.to_string()).into()),
        )
        .configure(pages)
        .service(actix_files::Files::new("/static", concat!(env!("CARGO_MANIFEST_DIR"), "/static")))
        .route("/metrics", get().to(http::metrics::scrape))
        .route("/healthz", get().to(http::health::healthz))
        .route("/readyz", get().to(http::health::readyz))
        .service(
            aw::scope("/api")
                .configure(|cfg| api(&mut Api::new(cfg, "/api")))
                .route("/openapi.json", get().to(http::openapi::serve))
                .default_service(aw::to(api_not_found)),
        );
}

/// The browser's pages and forms (SPEC §6, §10, §11).
fn pages(cfg: &mut ServiceConfig) {
    cfg.route("/", get().to(web::day::day))
        .route("/rooms", get().to(web::day::day))
        .route("/rooms/week", get().to(web::week::week))
        .route("/find", get().to(web::find::find))
        .route("/my", get().to(web::my::my))
        .route("/bookings", post().to(web::bookings::create))
        .configure(web::feeds::routes)
        .route("/bookings/{id}", get().to(web::bookings::detail))
        .route("/bookings/{id}/move", post().to(web::bookings::move_booking))
        .route("/bookings/{id}/cancel", get().to(web::bookings::confirm_cancel))
        .route("/bookings/{id}/cancel", post().to(web::bookings::cancel))
        .route("/bookings/{id}/check-in", post().to(web::bookings::check_in))
        .route("/login", get().to(web::account::login_form))
        .route("/login", post().to(web::account::login))
        .route("/logout", post().to(web::account::logout))
        .route("/admin/consistency", get().to(web::admin::consistency))
        .route("/admin/staff", get().to(web::admin::staff_page))
        .route("/admin/staff", post().to(web::admin::add_staff))
        .route("/admin/staff/{id}/disable", post().to(web::admin::disable_staff))
        .route("/admin/staff/{id}/enable", post().to(web::admin::enable_staff))
        .route("/admin/staff/{id}/password", post().to(web::admin::reset_password))
        .route("/admin/keys", post().to(web::admin::add_key))
        .route("/admin/keys/{id}/revoke", post().to(web::admin::revoke_key))
        .route("/account", get().to(web::account::account))
        .route("/account/password", post().to(web::account::change_password))
        .route("/account/calendar-token", post().to(web::account::rotate_calendar_token))
        .route("/admin/approvals", get().to(web::approvals::list))
        .route("/admin/approvals/{id}/approve", post().to(web::approvals::approve))
        .route("/admin/approvals/{id}/reject", post().to(web::approvals::reject))
        .route("/admin/reports", get().to(web::admin::reports::page))
        .route("/admin/rooms", get().to(web::admin::rooms::list))
        .route("/admin/rooms", post().to(web::admin::rooms::create))
        .route("/admin/rooms/{code}", get().to(web::admin::rooms::edit))
        .route("/admin/rooms/{code}", post().to(web::admin::rooms::update))
        .route("/admin/rooms/{code}/retire", post().to(web::admin::rooms::retire))
        .route("/admin/rooms/{code}/display-token", post().to(web::admin::rooms::issue_display_token))
        .route("/admin/rooms/{code}/display-token/revoke", post().to(web::admin::rooms::revoke_display_tokens))
        .route("/static/grid.css", get().to(web::grid_css))
        .configure(web::display::routes);
}

/// Every JSON route, each registered with its documentation.
fn api(api: &mut Api) {
    use crate::error::ErrorCode::*;
    http::rooms::routes(api);
    http::bookings::routes(api);
    http::history::routes(api);
    http::series::routes(api);
    http::capacity::routes(api);
    http::keys::routes(api);
    http::reports::routes(api);
    api.route(
        Method::GET,
        "/admin/consistency",
        Op::new::<crate::consistency::Report>(
            Tag::Admin,
            "getConsistencyReport",
            "every invariant check with its count and offending rows",
            200,
        )
        .admin(),
        http::admin::consistency,
    )
    .route(
        Method::POST,
        "/admin/sweep",
        Op::new::<crate::sweeper::SweepSummary>(Tag::Admin, "runSweep", "run one expiry sweep now", 200)
            .admin()
            .owner()
            .idempotent(true)
            .body::<http::admin::SweepBody>()
            .runs(&crate::sweeper::SWEEP),
        http::admin::sweep,
    )
    .route(
        Method::POST,
        "/admin/outbox/{delivery_id}/redrive",
        Op::new::<crate::outbox::Redriven>(
            Tag::Admin,
            "redriveDelivery",
            "give an EXHAUSTED delivery a fresh attempt budget",
            200,
        )
        .admin()
        .errors(&[NotFound, InvalidState])
        .runs(&crate::outbox::REDRIVE),
        http::admin::redrive,
    );
}

async fn api_not_found() -> HttpResponse {
    actix_web::ResponseError::error_response(&ApiError::not_found("route"))
}
