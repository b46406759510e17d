//! Every route of the server, browser pages and JSON API, in one table:
//! the doors are toolkits (`http`, `web`) and capabilities, and this file is
//! the only one that knows them all. `main` and the tests build the app
//! from [`configure`].

use actix_web::http::Method;
use actix_web::web::{self, ServiceConfig};
use actix_web::HttpResponse;

use crate::error::ApiError;
use crate::http;
use crate::http::openapi::{Api, Op, Tag};
use crate::web as ui;

/// Registers every route.
pub fn configure(cfg: &mut ServiceConfig) {
    cfg.app_data(web::PathConfig::default().error_handler(|_, _| ApiError::not_found("resource").into()))
        .app_data(
            web::QueryConfig::default().error_handler(|err, _| ApiError::malformed("query", err.to_string()).into()),
        )
        .configure(page_routes)
        .configure(dav_routes)
        .service(actix_files::Files::new("/static", concat!(env!("CARGO_MANIFEST_DIR"), "/static")))
        .route("/metrics", web::get().to(http::metrics::scrape))
        .route("/healthz", web::get().to(http::health::healthz))
        .route("/readyz", web::get().to(http::health::readyz))
        .service(
            web::scope("/api")
                .wrap(actix_web::middleware::from_fn(http::extract::authenticate_first))
                .wrap(actix_web::middleware::from_fn(http::localise::errors_in_callers_language))
                .configure(|cfg| api(&mut Api::new(cfg, "/api")))
                .route("/openapi.json", web::get().to(http::openapi::serve))
                .default_service(web::to(api_not_found)),
        )
        .default_service(web::to(page_not_found));
}

/// The browser's pages and forms (SPEC §6, §10, §11).
fn page_routes(cfg: &mut ServiceConfig) {
    cfg.route("/", web::get().to(ui::day::day))
        .route("/rooms", web::get().to(ui::day::day))
        .route("/rooms/week", web::get().to(ui::week::week))
        .route("/find", web::get().to(ui::find::find))
        .route("/my", web::get().to(ui::my::my))
        .route("/bookings", web::post().to(ui::bookings::create))
        .configure(ui::feeds::routes)
        .route("/bookings/{id}", web::get().to(ui::bookings::detail))
        .route("/bookings/{id}/move", web::post().to(ui::bookings::move_booking))
        .route("/bookings/{id}/cancel", web::get().to(ui::bookings::confirm_cancel))
        .route("/bookings/{id}/cancel", web::post().to(ui::bookings::cancel))
        .route("/bookings/{id}/check-in", web::post().to(ui::bookings::check_in))
        .route("/series/{id}/restore", web::get().to(ui::restore::page))
        .route("/series/{id}/restore", web::post().to(ui::restore::restore))
        .route("/login", web::get().to(ui::account::login_form))
        .route("/login", web::post().to(ui::account::login))
        .route("/logout", web::post().to(ui::account::logout))
        .route("/auth/oidc/start", web::get().to(ui::sso::start))
        .route("/auth/oidc/callback", web::get().to(ui::sso::callback))
        .route("/admin/consistency", web::get().to(ui::admin::consistency))
        .route("/admin/staff", web::get().to(ui::admin::staff_page))
        .route("/admin/access-log", web::get().to(ui::admin::access_log::page))
        .route("/admin/staff", web::post().to(ui::admin::add_staff))
        .route("/admin/staff/{id}/disable", web::post().to(ui::admin::disable_staff))
        .route("/admin/staff/{id}/enable", web::post().to(ui::admin::enable_staff))
        .route("/admin/staff/{id}/password", web::post().to(ui::admin::reset_password))
        .route("/admin/staff/{id}/delegates", web::post().to(ui::admin::set_delegates))
        .route("/admin/staff/{username}/erase", web::post().to(ui::admin::erase_staff))
        .route("/admin/keys", web::post().to(ui::admin::add_key))
        .route("/admin/keys/{id}/revoke", web::post().to(ui::admin::revoke_key))
        .route("/account", web::get().to(ui::account::account))
        .route("/account/export", web::get().to(ui::account::export_json))
        .route("/account/password", web::post().to(ui::account::change_password))
        .route("/account/calendar-token", web::post().to(ui::account::rotate_calendar_token))
        .route("/account/language", web::post().to(ui::account::choose_language))
        .route("/account/time-zone", web::post().to(ui::account::choose_time_zone))
        .route("/account/app-passwords", web::post().to(ui::account::create_app_password))
        .route("/account/delegates", web::post().to(ui::account::add_delegate))
        .route("/account/delegates/{username}/remove", web::post().to(ui::account::remove_delegate))
        .route("/account/app-passwords/{id}/revoke", web::post().to(ui::account::revoke_app_password))
        .route("/admin/approvals", web::get().to(ui::approvals::list))
        .route("/admin/approvals/{id}/approve", web::post().to(ui::approvals::approve))
        .route("/admin/approvals/{id}/reject", web::post().to(ui::approvals::reject))
        .route("/admin/reports", web::get().to(ui::admin::reports::page))
        .route("/admin/rooms", web::get().to(ui::admin::rooms::list))
        .route("/admin/rooms", web::post().to(ui::admin::rooms::create))
        .route("/admin/rooms/{code}", web::get().to(ui::admin::rooms::edit))
        .route("/admin/rooms/{code}", web::post().to(ui::admin::rooms::update))
        .route("/admin/rooms/{code}/retire", web::post().to(ui::admin::rooms::retire))
        .route("/admin/rooms/{code}/display-token", web::post().to(ui::admin::rooms::issue_display_token))
        .route("/admin/rooms/{code}/display-token/revoke", web::post().to(ui::admin::rooms::revoke_display_tokens))
        .route("/admin/areas", web::get().to(ui::admin::areas::list))
        .route("/admin/areas", web::post().to(ui::admin::areas::create))
        .route("/admin/areas/{code}", web::get().to(ui::admin::areas::edit))
        .route("/admin/areas/{code}", web::post().to(ui::admin::areas::update))
        .route("/admin/areas/{code}/plan", web::post().to(ui::admin::plan_upload::upload_plan))
        .route("/areas/{code}/plan", web::get().to(ui::plan::plan_page))
        .route("/areas/{code}/plan.img", web::get().to(ui::plan::plan_image))
        .route("/account/away", web::post().to(ui::account::add_away))
        .route("/admin/holidays", web::get().to(ui::admin::holidays::page))
        .route("/admin/holidays", web::post().to(ui::admin::holidays::create))
        .route("/admin/holidays/{code}/days", web::post().to(ui::admin::holidays::replace_days))
        .route("/static/grid.css", web::get().to(ui::grid_css))
        .configure(ui::display::routes);
}

/// The CalDAV door (SPEC §17): discovery, and every `/dav/` resource by
/// one dispatcher of WebDAV's methods (`PROPFIND`, `REPORT`, …), which
/// authenticates itself (HTTP Basic, no cookie: no CSRF token either).
fn dav_routes(cfg: &mut ServiceConfig) {
    cfg.route("/.well-known/caldav", web::route().to(crate::dav::discovery))
        .route("/dav/calendars/{username}/outbox/", web::post().to(crate::dav::serve))
        .route("/dav", web::route().to(crate::dav::serve))
        .route("/dav/{tail:.*}", web::route().to(crate::dav::serve));
}

/// Every JSON route, each registered with its documentation.
fn api(api: &mut Api) {
    use crate::error::ErrorCode::*;
    http::rooms::routes(api);
    http::areas::routes(api);
    http::holidays::routes(api);
    http::bookings::routes(api);
    http::history::routes(api);
    http::access_log::routes(api);
    http::series::routes(api);
    http::capacity::routes(api);
    http::keys::routes(api);
    http::reports::routes(api);
    http::staff::routes(api);
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
    )
    .route(
        Method::GET,
        "/admin/outbox",
        Op::new::<crate::outbox::list::Deliveries>(
            Tag::Admin,
            "listBookingDeliveries",
            "a booking's deliveries on every channel, with the last SMTP reply or HTTP answer verbatim",
            200,
        )
        .admin()
        .query("bookingId", "the booking's id", true)
        .errors(&[MalformedRequest, NotFound]),
        http::admin::outbox,
    );
}

/// An address no route knows: a page in yeyak's look, in the reader's
/// language, with a way home (it was an empty 404 the browser drew as its
/// own error).
async fn page_not_found() -> Result<HttpResponse, ui::WebError> {
    Err(ui::WebError::message(
        actix_web::http::StatusCode::NOT_FOUND,
        "error-not-found-heading",
        "error-page-not-found",
    ))
}

async fn api_not_found() -> HttpResponse {
    actix_web::ResponseError::error_response(&ApiError::not_found("route"))
}
