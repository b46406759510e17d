//! `POST /account/away` (`from`, `to`; SPEC §28, §29): the person is away
//! those days, both inclusive, and others may book the desk assigned to them.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use crate::auth::away::{AddAway, AwaySpan};
use crate::state::AppState;
use crate::web::language::PageI18n;
use crate::web::pages::{self, Notice};
use crate::web::{StaffForm, WebError};

use super::page::render_account;

pub async fn add_away(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
) -> Result<HttpResponse, WebError> {
    let i18n = PageI18n::of(&req);
    let span = match AwaySpan::parse(form.get("from"), form.get("to")) {
        Ok(span) => span,
        Err(err) => {
            let message = Notice::error(pages::refusal(&i18n, &err));
            return render_account(&state, &req, &user, Some(message), StatusCode::BAD_REQUEST).await;
        }
    };
    let command = AddAway { span };
    let added = state
        .pipeline
        .run(&crate::web::principal(&state, &user), None, &command)
        .await
        .map_err(|e| crate::web::form::refused_page(&e))?;
    let (from, to) = (added.from.to_string(), added.to.to_string());
    let message = Notice::ok(i18n.t2("account-away-added", "from", from, "to", to));
    render_account(&state, &req, &user, Some(message), StatusCode::OK).await
}
