//! `outbox.redrive`: an admin gives an EXHAUSTED delivery a fresh attempt
//! budget, on every channel of the delivery that gave up.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::store;
use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};

pub static REDRIVE: Operation = Operation::new("outbox.redrive", &[Role::Admin]);

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Redriven {
    pub delivery_id: String,
    pub status: String,
}

#[derive(Debug, Clone)]
pub struct Redrive {
    pub delivery_id: String,
}

impl Command for Redrive {
    type Output = Redriven;

    fn operation(&self) -> &'static Operation {
        &REDRIVE
    }

    fn fingerprint(&self) -> serde_json::Value {
        json!({ "deliveryId": self.delivery_id })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Redriven, CommandError> {
        let before = store::redrive(conn, &self.delivery_id, ctx.now).await?;
        let exhausted = before.iter().any(|s| s == "EXHAUSTED");
        match before.first().map(String::as_str) {
            None => Err(ApiError::not_found("delivery").into()),
            Some(_) if exhausted => Ok(Redriven { delivery_id: self.delivery_id.clone(), status: "PENDING".into() }),
            Some(other) => Err(ApiError::new(
                ErrorCode::InvalidState,
                format!("only EXHAUSTED deliveries can be re-driven, this one is {other}"),
            )
            .with_details(json!({ "state": other }))
            .into()),
        }
    }
}
