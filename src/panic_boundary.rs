//! The panic boundary (SPEC §22): a request whose handling panics answers
//! 500 `INTERNAL` naming its request id, in its door's own format — JSON
//! under `/api` and for the probes, `DAV:error` under `/dav`, a page
//! elsewhere — is logged with that id, counted in `yeyak_panics_total`, and
//! the worker serves on (the release build unwinds). Without it the worker
//! thread died and every connection on it was dropped unanswered.
//!
//! It wraps the whole application's service, outside every middleware: an
//! `actix-web` middleware would have to keep the `HttpRequest` to answer
//! with, and a request held twice cannot be routed. What the answer needs
//! (path, language, request id) is read from the raw request before it goes
//! in; a request without a usable `X-Request-Id` gets one here, which
//! `http::response_headers` then echoes as usual.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};

use actix_http::{HttpMessage, Request, Response};
use actix_service::{IntoServiceFactory, Service, ServiceFactory};
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{AppConfig, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use futures_util::FutureExt;
use prometheus::IntCounter;
use serde_json::json;

use crate::dav::DavError;
use crate::error::ApiError;
use crate::i18n::Lang;
use crate::web::language::PageI18n;
use crate::web::pages::{self, Message};

/// What the answer to a panic needs, read before the request goes in.
struct Asked {
    method: String,
    path: String,
    lang: Lang,
    request_id: String,
}

impl Asked {
    fn of(req: &mut Request) -> Asked {
        let id = match crate::http::request_id(req.headers()) {
            Some(id) => id,
            None => {
                let id = crate::http::new_request_id();
                if let Ok(v) = HeaderValue::from_str(&id) {
                    req.headers_mut().insert(header::HeaderName::from_static("x-request-id"), v);
                }
                id
            }
        };
        let lang = req
            .headers()
            .get(header::ACCEPT_LANGUAGE)
            .and_then(|h| h.to_str().ok())
            .and_then(Lang::from_accept_language)
            .unwrap_or_default();
        Asked { method: req.method().to_string(), path: req.path().to_owned(), lang, request_id: id }
    }
}

/// `app` with its panics answered; `panics` counts them.
pub fn around<I, SF, B>(
    app: I,
    panics: IntCounter,
) -> impl ServiceFactory<
    Request,
    Config = AppConfig,
    Response = Response<BoxBody>,
    Error = actix_web::Error,
    InitError = SF::InitError,
>
where
    I: IntoServiceFactory<SF, Request>,
    SF: ServiceFactory<Request, Config = AppConfig, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody + 'static,
{
    actix_service::apply_fn_factory(app, move |mut req: Request, srv: &SF::Service| {
        let asked = Asked::of(&mut req);
        let panics = panics.clone();
        // Routing runs when the service is called, the handler when polled.
        let called = panic::catch_unwind(AssertUnwindSafe(|| srv.call(req)));
        async move {
            let outcome = match called {
                Ok(handling) => AssertUnwindSafe(handling).catch_unwind().await,
                Err(panic) => Err(panic),
            };
            match outcome {
                Ok(answered) => answered.map(|res| res.map_into_boxed_body().into()),
                Err(panic) => {
                    tracing::error!(request_id = %asked.request_id, method = %asked.method, path = %asked.path,
                        panic = %payload_text(panic.as_ref()), "a request panicked; answered 500 INTERNAL");
                    panics.inc();
                    Ok(answer(&asked).into())
                }
            }
        }
    })
}

/// What the panic said, when it said it with a string.
fn payload_text(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

/// 500 `INTERNAL` in the door's format, with the headers every answer has.
fn answer(asked: &Asked) -> HttpResponse {
    let err = ApiError::internal().with_details(json!({ "requestId": asked.request_id }));
    let path = asked.path.as_str();
    let mut res = if path == "/dav" || path.starts_with("/dav/") {
        DavError::Refused(err).into_response(asked.lang)
    } else if crate::transport::is_page(path) {
        let page = pages::message_page(PageI18n::plain(asked.lang), &Message::refusal("error-internal-heading", err));
        crate::web::html_response(StatusCode::INTERNAL_SERVER_ERROR, page)
    } else {
        let mut body = err.body();
        let code = "INTERNAL";
        if let Some(message) = crate::i18n::api::message(asked.lang, code, &err.details, &err.message) {
            body["message"] = json!(message);
        }
        HttpResponse::InternalServerError().json(body)
    };
    let headers = res.headers_mut();
    for (name, value) in [
        ("x-request-id", asked.request_id.as_str()),
        ("x-content-type-options", "nosniff"),
        ("cache-control", "no-store"),
    ] {
        if let Ok(v) = HeaderValue::from_str(value) {
            headers.insert(header::HeaderName::from_static(name), v);
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use actix_web::{web, App, HttpServer};

    use super::*;

    async fn panics() -> HttpResponse {
        panic!("a bug")
    }

    #[actix_web::test]
    async fn a_panic_answers_500_internal_in_each_doors_format_and_the_server_serves_on() {
        let counter = IntCounter::new("panics_total", "test").unwrap();
        let counted = counter.clone();
        let server = HttpServer::new(move || {
            let app = App::new()
                .route("/api/boom", web::get().to(panics))
                .route("/dav/boom", web::get().to(panics))
                .route("/boom", web::get().to(panics))
                .route("/fine", web::get().to(|| async { HttpResponse::Ok().body("fine") }));
            around(app, counted.clone())
        })
        .workers(1)
        .bind("127.0.0.1:0")
        .unwrap();
        let base = format!("http://{}", server.addrs()[0]);
        actix_web::rt::spawn(server.run());
        let http = reqwest::Client::new();
        for (path, content_type, needle, lang) in [
            ("/api/boom", "application/json", "\"code\":\"INTERNAL\"", "ko"),
            ("/dav/boom", "application/xml", "<Y:code>INTERNAL</Y:code>", "en"),
            ("/boom", "text/html", "Something went wrong", "en"),
            ("/boom", "text/html", "문제가 생겼습니다", "ko"),
        ] {
            let res = http
                .get(format!("{base}{path}"))
                .header("X-Request-Id", "req-12345678")
                .header("Accept-Language", lang)
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), reqwest::StatusCode::INTERNAL_SERVER_ERROR, "{path}");
            let ct = res.headers()["content-type"].to_str().unwrap().to_owned();
            assert!(ct.starts_with(content_type), "{path}: {ct}");
            assert_eq!(res.headers()["x-request-id"], "req-12345678");
            let body = res.text().await.unwrap();
            assert!(body.contains(needle), "{path}: {body}");
            assert!(body.contains("req-12345678"), "{path} names the request id: {body}");
        }
        // A request without an id gets one, in the header and the body alike.
        let res = http.get(format!("{base}/api/boom")).send().await.unwrap();
        let id = res.headers()["x-request-id"].to_str().unwrap().to_owned();
        assert!(res.text().await.unwrap().contains(&id));
        assert_eq!(counter.get(), 5);
        // The one worker that panicked five times still serves.
        let res = http.get(format!("{base}/fine")).send().await.unwrap();
        assert_eq!((res.status(), res.text().await.unwrap().as_str()), (reqwest::StatusCode::OK, "fine"));
    }
}
