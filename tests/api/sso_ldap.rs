//! Company sign-in against a real directory (SPEC §16): Debian's `slapd`,
//! started here as a foreground process on a free port with a configuration
//! generated into a temporary directory (`slapadd -n0`; no system service),
//! people with `entryUUID`s, an admin group, StartTLS and ldaps with a
//! self-signed CA made by openssl. The directory lets a DN without a
//! password bind anonymously (`olcAllows: bind_anon_dn`, as Active
//! Directory does), so the empty-password check is the only thing between
//! an empty password and a session.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use reqwest::StatusCode;

use crate::helpers::*;
use crate::sso_support::password;
use crate::web::{ADMIN_PASSWORD, ADMIN_USER};

const SUFFIX: &str = "dc=example,dc=com";
const ROOT_PASSWORD: &str = "root-secret-1";
const READER_PASSWORD: &str = "reader-secret-1";

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e} (apt-get install slapd ldap-utils openssl)"));
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A CA and a server certificate for 127.0.0.1, made once per test run.
fn certificates() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("yeyak-ldap-ca-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let ssl = |args: &[&str]| run(Command::new("openssl").args(args).current_dir(&dir));
        ssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=yeyak test CA",
        ]);
        ssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ]);
        std::fs::write(dir.join("ext.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n").unwrap();
        ssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ]);
        dir
    })
}

fn hash(password: &str) -> String {
    let out = Command::new("slappasswd").args(["-s", password]).output().expect("slappasswd (slapd)");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A running slapd; dropping it stops it and removes its files.
pub struct Slapd {
    child: Option<Child>,
    dir: PathBuf,
    pub ldap_port: u16,
    pub ldaps_port: u16,
}

impl Drop for Slapd {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Slapd {
    pub async fn start() -> Slapd {
        tokio::task::spawn_blocking(Slapd::start_blocking).await.unwrap()
    }

    fn start_blocking() -> Slapd {
        let certs = certificates();
        let dir = std::env::temp_dir().join(format!("yeyak-slapd-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(dir.join("slapd.d")).unwrap();
        std::fs::create_dir_all(dir.join("data")).unwrap();
        for f in ["ca.pem", "server.pem", "server.key"] {
            std::fs::copy(certs.join(f), dir.join(f)).unwrap();
        }
        let d = dir.display();
        let config = format!(
            "dn: cn=config\nobjectClass: olcGlobal\ncn: config\nolcPidFile: {d}/slapd.pid\nolcAllows: bind_anon_dn\n\
             olcTLSCACertificateFile: {d}/ca.pem\nolcTLSCertificateFile: {d}/server.pem\nolcTLSCertificateKeyFile: {d}/server.key\n\n\
             dn: cn=module{{0}},cn=config\nobjectClass: olcModuleList\ncn: module{{0}}\nolcModulePath: /usr/lib/ldap\nolcModuleLoad: back_mdb\n\n\
             dn: cn=schema,cn=config\nobjectClass: olcSchemaConfig\ncn: schema\n\n\
             include: file:///etc/ldap/schema/core.ldif\ninclude: file:///etc/ldap/schema/cosine.ldif\n\
             include: file:///etc/ldap/schema/nis.ldif\ninclude: file:///etc/ldap/schema/inetorgperson.ldif\n\n\
             dn: olcDatabase={{-1}}frontend,cn=config\nobjectClass: olcDatabaseConfig\nobjectClass: olcFrontendConfig\nolcDatabase: {{-1}}frontend\n\n\
             dn: olcDatabase={{0}}config,cn=config\nobjectClass: olcDatabaseConfig\nolcDatabase: {{0}}config\nolcAccess: {{0}}to * by * none\n\n\
             dn: olcDatabase={{1}}mdb,cn=config\nobjectClass: olcDatabaseConfig\nobjectClass: olcMdbConfig\nolcDatabase: {{1}}mdb\n\
             olcSuffix: {SUFFIX}\nolcRootDN: cn=root,{SUFFIX}\nolcRootPW: {ROOT_PASSWORD}\nolcDbDirectory: {d}/data\n\
             olcAccess: {{0}}to attrs=userPassword by self =w by anonymous auth by * none\n\
             olcAccess: {{1}}to * by dn.exact=\"cn=reader,{SUFFIX}\" read by self read by * none\n"
        );
        std::fs::write(dir.join("config.ldif"), config).unwrap();
        run(Command::new("slapadd")
            .args(["-n0", "-F"])
            .arg(dir.join("slapd.d"))
            .arg("-l")
            .arg(dir.join("config.ldif")));
        let person = |uid: &str, ou: &str, cn: &str, pw: &str| {
            format!(
                "dn: uid={uid},ou={ou},{SUFFIX}\nobjectClass: inetOrgPerson\nuid: {uid}\ncn: {cn}\nsn: {uid}\nmail: {uid}@example.com\nuserPassword: {}\n\n",
                hash(pw)
            )
        };
        let mut data = format!(
            "dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example\n\n\
             dn: ou=people,{SUFFIX}\nobjectClass: organizationalUnit\nou: people\n\n\
             dn: ou=contractors,{SUFFIX}\nobjectClass: organizationalUnit\nou: contractors\n\n\
             dn: cn=reader,{SUFFIX}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\ncn: reader\nuserPassword: {}\n\n",
            hash(READER_PASSWORD)
        );
        data += &person("kim", "people", "김민수", "kim-ldap-pass");
        data += &person("lee", "people", "이영희", "lee-ldap-pass");
        data += &person("admin", "people", "Directory Admin", "dir-admin-pass");
        data += &person("twin", "people", "Twin One", "twin-pass");
        data += &person("twin", "contractors", "Twin Two", "twin-pass");
        data += &format!(
            "dn: cn=yeyak-admins,{SUFFIX}\nobjectClass: groupOfNames\ncn: yeyak-admins\nmember: uid=kim,ou=people,{SUFFIX}\n\n\
             dn: cn=room-admins,{SUFFIX}\nobjectClass: groupOfUniqueNames\ncn: room-admins\nuniqueMember: uid=lee,ou=people,{SUFFIX}\n"
        );
        std::fs::write(dir.join("data.ldif"), data).unwrap();
        run(Command::new("slapadd").args(["-n1", "-F"]).arg(dir.join("slapd.d")).arg("-l").arg(dir.join("data.ldif")));
        let mut slapd = Slapd { child: None, dir, ldap_port: free_port(), ldaps_port: free_port() };
        slapd.launch();
        slapd
    }

    fn launch(&mut self) {
        let urls = format!("ldap://127.0.0.1:{}/ ldaps://127.0.0.1:{}/", self.ldap_port, self.ldaps_port);
        let child = Command::new("slapd")
            .args(["-d", "0", "-h", &urls, "-F"])
            .arg(self.dir.join("slapd.d"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("slapd is installed (apt-get install slapd)");
        self.child = Some(child);
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", self.ldap_port)).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!("slapd did not start");
    }

    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// Applies an LDIF change as the directory's root.
    pub fn modify(&self, ldif: &str) {
        let path = self.dir.join(format!("change-{}.ldif", uuid::Uuid::new_v4().simple()));
        std::fs::write(&path, ldif).unwrap();
        run(Command::new("ldapmodify")
            .args([
                "-x",
                "-H",
                &format!("ldap://127.0.0.1:{}", self.ldap_port),
                "-D",
                &format!("cn=root,{SUFFIX}"),
                "-w",
                ROOT_PASSWORD,
                "-f",
            ])
            .arg(&path));
    }

    /// yeyak's settings for this directory over StartTLS.
    pub fn settings(&self, c: &mut yeyak::config::Config) {
        c.ldap_url = Some(format!("ldap://127.0.0.1:{}", self.ldap_port));
        c.ldap_starttls = true;
        c.ldap_ca_file = Some(self.ca());
        c.ldap_bind_dn = format!("cn=reader,{SUFFIX}");
        c.ldap_bind_password = READER_PASSWORD.into();
        c.ldap_user_base = SUFFIX.into();
        c.ldap_admin_group = Some(format!("cn=yeyak-admins,{SUFFIX}"));
    }
}

/// (username, admin, email, display name, source) of the account linked to a directory entry of `uid`.
async fn directory_account(app: &TestApp, uid: &str) -> Option<(String, bool, Option<String>, String, String)> {
    app.db()
        .await
        .query_opt(
            "SELECT u.username, u.is_admin, u.email, u.display_name, i.subject FROM staff_user u
             JOIN staff_identity i ON i.user_id = u.id WHERE i.issuer = 'ldap' AND u.email = $1 || '@example.com'",
            &[&uid],
        )
        .await
        .unwrap()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_person_signs_in_with_the_usual_form_over_starttls() {
    let slapd = Slapd::start().await;
    let app = TestApp::spawn_with(|c| slapd.settings(c)).await;
    assert_eq!(password(&app, "kim", "kim-ldap-pass").await, StatusCode::SEE_OTHER);
    let (username, admin, email, name, subject) = directory_account(&app, "kim").await.expect("a linked account");
    assert_eq!(
        (username.as_str(), admin, email.as_deref(), name.as_str()),
        ("kim", true, Some("kim@example.com"), "김민수")
    );
    assert!(subject.starts_with("entryUUID:") && subject.len() == "entryUUID:".len() + 36, "{subject}");
    // Again: the same account, nothing doubled.
    let browser = crate::web::Browser::new(&app);
    assert_eq!(browser.sign_in("kim", "kim-ldap-pass").await.status, StatusCode::SEE_OTHER);
    assert_eq!(app.count("SELECT count(*) FROM staff_user WHERE source = 'ldap'").await, 1);
    let account = browser.get("/account").await;
    assert!(!account.html.contains("/account/password"), "no local password to change");
    let source: String =
        app.db().await.query_one("SELECT source FROM staff_user WHERE username = 'kim'", &[]).await.unwrap().get(0);
    assert_eq!(source, "ldap");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_empty_or_ambiguous_credentials_are_refused_before_any_session() {
    let slapd = Slapd::start().await;
    let app = TestApp::spawn_with(|c| slapd.settings(c)).await;
    for (user, pw, why) in [
        ("kim", "wrong-password", "wrong password"),
        ("kim", "", "empty password: the directory would bind anonymously"),
        ("twin", "twin-pass", "two entries"),
        ("nobody", "whatever-1", "no entry"),
    ] {
        let browser = crate::web::Browser::new(&app);
        let login = browser.get("/login").await;
        let csrf = login.field("csrf_token");
        let page = browser.post("/login", &[("username", user), ("password", pw), ("csrf_token", &csrf)]).await;
        assert_eq!(page.status, StatusCode::UNAUTHORIZED, "{why}");
        assert!(page.html.contains("아이디 또는 비밀번호가 올바르지 않습니다"), "{why}");
    }
    assert_eq!(app.count("SELECT count(*) FROM staff_session").await, 0);
    assert_eq!(app.count("SELECT count(*) FROM staff_identity").await, 0, "no account for any of them");
    // §13's throttling counts directory failures like any other.
    let mut last = StatusCode::OK;
    for _ in 0..6 {
        last = password(&app, "lee", "wrong-password").await;
    }
    assert_eq!(last, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_rights_follow_the_directory_group_at_every_sign_in() {
    let slapd = Slapd::start().await;
    let app = TestApp::spawn_with(|c| slapd.settings(c)).await;
    assert_eq!(password(&app, "kim", "kim-ldap-pass").await, StatusCode::SEE_OTHER);
    assert!(directory_account(&app, "kim").await.unwrap().1);
    slapd.modify(&format!(
        "dn: cn=yeyak-admins,{SUFFIX}\nchangetype: modify\nadd: member\nmember: uid=lee,ou=people,{SUFFIX}\n-\ndelete: member\nmember: uid=kim,ou=people,{SUFFIX}\n"
    ));
    assert_eq!(password(&app, "kim", "kim-ldap-pass").await, StatusCode::SEE_OTHER);
    assert!(!directory_account(&app, "kim").await.unwrap().1, "out of the group: staff at the next sign-in");
    assert_eq!(password(&app, "lee", "lee-ldap-pass").await, StatusCode::SEE_OTHER);
    assert!(directory_account(&app, "lee").await.unwrap().1);

    // A groupOfUniqueNames works the same (uniqueMember).
    let unique = app
        .another_process_with(|c| {
            slapd.settings(c);
            c.ldap_admin_group = Some(format!("cn=room-admins,{SUFFIX}"));
        })
        .await;
    assert_eq!(password(&unique, "lee", "lee-ldap-pass").await, StatusCode::SEE_OTHER);
    assert!(directory_account(&app, "lee").await.unwrap().1);
    assert_eq!(password(&unique, "kim", "kim-ldap-pass").await, StatusCode::SEE_OTHER);
    assert!(!directory_account(&app, "kim").await.unwrap().1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_directory_never_takes_over_a_local_account_or_lets_a_disabled_person_in() {
    let slapd = Slapd::start().await;
    let app = TestApp::spawn_with(|c| slapd.settings(c)).await;
    // The directory's "admin" with the directory's password: an account of its own.
    assert_eq!(password(&app, ADMIN_USER, "dir-admin-pass").await, StatusCode::SEE_OTHER);
    let (username, admin, ..) = directory_account(&app, "admin").await.unwrap();
    assert_eq!((username.as_str(), admin), ("admin-2", false));
    let local: (String, bool) = {
        let row = app
            .db()
            .await
            .query_one("SELECT source, is_admin FROM staff_user WHERE username = 'admin'", &[])
            .await
            .unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!(local, ("local".into(), true));
    assert_eq!(password(&app, ADMIN_USER, ADMIN_PASSWORD).await, StatusCode::SEE_OTHER, "the local admin first");

    assert_eq!(password(&app, "lee", "lee-ldap-pass").await, StatusCode::SEE_OTHER);
    app.db().await.execute("UPDATE staff_user SET disabled_at = now() WHERE username = 'lee'", &[]).await.unwrap();
    assert_eq!(password(&app, "lee", "lee-ldap-pass").await, StatusCode::UNAUTHORIZED, "disabled in yeyak");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_that_is_down_is_a_503_and_the_break_glass_admin_still_signs_in() {
    let mut slapd = Slapd::start().await;
    let app = TestApp::spawn_with(|c| slapd.settings(c)).await;
    slapd.stop();
    let browser = crate::web::Browser::new(&app);
    let login = browser.get("/login").await;
    let csrf = login.field("csrf_token");
    let page =
        browser.post("/login", &[("username", "kim"), ("password", "kim-ldap-pass"), ("csrf_token", &csrf)]).await;
    assert_eq!(page.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(page.html.contains("회사 디렉터리에 지금 연결할 수 없습니다"));
    assert!(page.html.contains("name=\"password\""), "the form, to try again");
    assert_eq!(password(&app, ADMIN_USER, ADMIN_PASSWORD).await, StatusCode::SEE_OTHER);
    assert_eq!(app.count("SELECT count(*) FROM staff_login_throttle").await, 0, "an outage is nobody's failure");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ldaps_works_with_the_configured_ca_and_an_unknown_ca_is_refused() {
    let slapd = Slapd::start().await;
    let ldaps = |c: &mut yeyak::config::Config| {
        slapd.settings(c);
        c.ldap_url = Some(format!("ldaps://127.0.0.1:{}", slapd.ldaps_port));
        c.ldap_starttls = false;
    };
    let app = TestApp::spawn_with(ldaps).await;
    assert_eq!(password(&app, "kim", "kim-ldap-pass").await, StatusCode::SEE_OTHER);
    // Without the CA file the directory's certificate is not trusted: nothing is sent.
    let untrusting = app
        .another_process_with(|c| {
            ldaps(c);
            c.ldap_ca_file = None;
        })
        .await;
    assert_eq!(password(&untrusting, "kim", "kim-ldap-pass").await, StatusCode::SERVICE_UNAVAILABLE);
    // A plain ldap:// without StartTLS does not start at all.
    let mut config = test_config(&app.db_name);
    slapd.settings(&mut config);
    config.ldap_starttls = false;
    let refused = yeyak::startup::build(config).await.err().expect("refused");
    assert!(refused.to_string().contains("YEYAK_LDAP_STARTTLS"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_account_is_made_under_the_directorys_own_uid_and_every_spelling_counts_once() {
    let slapd = Slapd::start().await;
    let app = TestApp::spawn_with(|c| slapd.settings(c)).await;
    // The directory matches `uid` case-blind; yeyak made the account "KIM" before.
    assert_eq!(password(&app, "KIM", "kim-ldap-pass").await, StatusCode::SEE_OTHER);
    let (username, ..) = directory_account(&app, "kim").await.expect("a linked account");
    assert_eq!(username, "kim");
    assert_eq!(password(&app, "Kim", "kim-ldap-pass").await, StatusCode::SEE_OTHER);
    assert_eq!(app.count("SELECT count(*) FROM staff_user WHERE source = 'ldap'").await, 1, "one account");
    // Wrong guesses under several spellings fill one count (SPEC §22): the
    // lock the lowercase spelling meets is the one `Lee`, `LEE`… set off.
    let mut last = StatusCode::OK;
    for spelling in ["Lee", "LEE", "lEe", "leE", "LeE", "lee"] {
        last = password(&app, spelling, "wrong-password").await;
    }
    assert_eq!(last, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(app.count("SELECT count(*) FROM staff_login_throttle").await, 1);
}
