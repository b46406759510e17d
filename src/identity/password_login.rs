//! Who signs in with a password kept by yeyak (`YEYAK_PASSWORD_LOGIN`,
//! SPEC §16): a setting's value, read by `config` and judged by `auth`.

/// Who signs in with a password kept by yeyak (`YEYAK_PASSWORD_LOGIN`, SPEC §16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PasswordLogin {
    /// Every local account.
    On,
    /// Only `YEYAK_ADMIN_USER`, the break-glass account for when the
    /// company's provider or directory is down.
    AdminOnly,
    Off,
}

impl std::str::FromStr for PasswordLogin {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, String> {
        match raw {
            "on" => Ok(PasswordLogin::On),
            "admin-only" => Ok(PasswordLogin::AdminOnly),
            "off" => Ok(PasswordLogin::Off),
            other => Err(format!("`{other}` is not one of on, admin-only, off")),
        }
    }
}

impl PasswordLogin {
    /// Whether the local account `username` may sign in with its password.
    pub fn allows(self, username: &str, break_glass: &str) -> bool {
        match self {
            PasswordLogin::On => true,
            PasswordLogin::AdminOnly => username.eq_ignore_ascii_case(break_glass),
            PasswordLogin::Off => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PasswordLogin;

    #[test]
    fn password_sign_in_can_be_narrowed_to_the_break_glass_admin() {
        let parsed: Vec<PasswordLogin> = ["on", "admin-only", "off"].iter().map(|s| s.parse().unwrap()).collect();
        assert_eq!(parsed, [PasswordLogin::On, PasswordLogin::AdminOnly, PasswordLogin::Off]);
        assert!("yes".parse::<PasswordLogin>().is_err());
        assert!(PasswordLogin::On.allows("kim", "admin"));
        assert!(PasswordLogin::AdminOnly.allows("admin", "admin"));
        assert!(!PasswordLogin::AdminOnly.allows("kim", "admin"));
        assert!(!PasswordLogin::Off.allows("admin", "admin"));
    }
}
