//! Approvals over MCP: a server built with `elicit_approval` asks the client's user to approve
//! each call of a tool that needs approval (`elicitation/create`, with the tool, the arguments
//! and their digest), and runs it only on an `accept` that names that digest. And a tool that
//! asks the client's user itself (`ToolContext::elicit`). rmcp's client plays the user, in
//! memory. A client of protocol 2026-07-28, which allows the server no requests of its own, is
//! asked through an input-required result and answers by sending the call again.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reticent::agent::CallDigest;
use reticent::mcp::rmcp::ClientHandler;
use reticent::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, CustomRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, ErrorData, Implementation, InputRequest, InputRequiredResult,
    InputResponses, ProtocolVersion, RequestMetaObject, ServerResult,
};
use reticent::mcp::rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, RequestContext, RoleClient, RunningService,
};
use reticent::mcp::{ApprovalRefused, AskError, Elicited, McpServer, RefusalReason};
use reticent::{ToolFailure, failures::kinds};
use reticent_tests::mcp::{Failures, text};
use serde_json::{Value, json};

/// A bank whose `close_account` needs a person's approval before each call.
#[derive(Debug, Default)]
struct Bank {
    closed: AtomicUsize,
}

#[reticent::tools]
impl Bank {
    /// Close a customer's account.
    #[tool(destructive, needs_approval)]
    fn close_account(
        &self,
        /// The account.
        account: String,
    ) -> String {
        self.closed.fetch_add(1, Ordering::SeqCst);
        format!("closed {account}")
    }

    /// Look up an account's balance.
    #[tool(read_only)]
    fn balance(
        &self,
        /// The account.
        account: String,
    ) -> String {
        format!("{account}: 10.00")
    }
}

impl Bank {
    fn closed(&self) -> usize {
        self.closed.load(Ordering::SeqCst)
    }
}

/// What the client's user answers when asked.
#[derive(Clone, Debug)]
enum Answer {
    /// Accepts the form as it comes: the digest it was shown.
    Accept,
    /// Accepts with this digest, whatever it was shown.
    AcceptWith(CallDigest),
    /// Accepts with no content.
    AcceptEmpty,
    Decline,
    Cancel,
    /// Never answers.
    Never,
    /// The client fails the request with this message.
    Fail(&'static str),
    /// Accepts with this content.
    Content(Value),
}

/// rmcp's client as the user: it declares elicitation (unless `asks` is false), records each
/// question, and answers as `answer` says.
#[derive(Clone)]
struct User {
    answer: Answer,
    asks: bool,
    asked: Arc<Mutex<Vec<ElicitRequestParams>>>,
}

impl User {
    fn answering(answer: Answer) -> Self {
        Self {
            answer,
            asks: true,
            asked: Arc::default(),
        }
    }

    fn asked(&self) -> Vec<ElicitRequestParams> {
        self.asked.lock().unwrap().clone()
    }
}

/// The default of the form's `digest` field: the digest the user is shown.
fn shown_digest(request: &ElicitRequestParams) -> String {
    let ElicitRequestParams::FormElicitationParams {
        requested_schema, ..
    } = request
    else {
        panic!("a form: {request:?}")
    };
    let schema = serde_json::to_value(requested_schema).unwrap();
    assert_eq!(schema["required"], json!(["digest"]), "{schema}");
    schema["properties"]["digest"]["default"]
        .as_str()
        .unwrap_or_else(|| panic!("the digest is filled in: {schema}"))
        .to_owned()
}

impl ClientHandler for User {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.asks {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("user", "1"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.lock().unwrap().push(request.clone());
        let accept = |digest: String| {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"digest": digest}))
        };
        Ok(match &self.answer {
            Answer::Accept => accept(shown_digest(&request)),
            Answer::AcceptWith(digest) => accept(digest.to_string()),
            Answer::AcceptEmpty => ElicitResult::new(ElicitationAction::Accept),
            Answer::Decline => ElicitResult::new(ElicitationAction::Decline),
            Answer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
            Answer::Never => std::future::pending().await,
            Answer::Fail(message) => return Err(ErrorData::internal_error(*message, None)),
            Answer::Content(content) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(content.clone())
            }
        })
    }
}

/// A server over the bank, its failures, and the user's client connected to it.
struct Setup {
    bank: Arc<Bank>,
    failures: Failures,
    client: RunningService<RoleClient, User>,
}

/// How long the tests' servers wait for an answer.
const WAIT: Duration = Duration::from_secs(10);

async fn setup(
    user: User,
    build: impl FnOnce(reticent::mcp::McpServerBuilder) -> reticent::mcp::McpServerBuilder,
) -> Setup {
    connect(user, build, ClientLifecycleMode::Initialize).await
}

async fn connect(
    user: User,
    build: impl FnOnce(reticent::mcp::McpServerBuilder) -> reticent::mcp::McpServerBuilder,
    lifecycle: ClientLifecycleMode,
) -> Setup {
    let bank = Arc::new(Bank::default());
    let failures = Failures::default();
    let server = build(
        McpServer::builder()
            .toolbox(Arc::clone(&bank))
            .on_failure(failures.hook()),
    )
    .build()
    .unwrap();
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    // The server serves until the client leaves. A client of protocol 2026-07-28 is connected
    // once `server/discover` is answered, and the server starts with its first request.
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let client = user.serve_with_lifecycle(client_end, lifecycle);
    let client = tokio::time::timeout(Duration::from_secs(30), client)
        .await
        .expect("the client connects in time");
    Setup {
        bank,
        failures,
        client: client.expect("the client connects"),
    }
}

async fn asking(user: User) -> Setup {
    setup(user, |builder| builder.elicit_approval(WAIT)).await
}

fn close(account: &str) -> CallToolRequestParams {
    let Value::Object(arguments) = json!({"account": account}) else {
        unreachable!()
    };
    CallToolRequestParams::new("close_account").with_arguments(arguments)
}

async fn call(setup: &Setup, params: CallToolRequestParams) -> CallToolResult {
    tokio::time::timeout(Duration::from_secs(30), setup.client.call_tool(params))
        .await
        .expect("the call is answered")
        .expect("the call is a result")
}

/// The reason of the one failure the server reported, which refused `close_account`.
fn refusal(failures: &Failures) -> (ToolFailure, RefusalReason) {
    let failure = failures.one();
    assert_eq!(failure.tool, "close_account");
    assert_eq!(failure.kind, kinds::NOT_APPROVED);
    let refused = failure
        .error
        .downcast_ref::<ApprovalRefused>()
        .expect("the error says why the call was not approved")
        .clone();
    assert_eq!(refused.tool, "close_account");
    assert_eq!(refused.call_id, failure.call_id);
    (failure, refused.reason)
}

const NOT_APPROVED: &str = "Tool 'close_account' was not approved";

#[tokio::test]
async fn an_accepted_call_runs_once_the_user_saw_the_tool_the_arguments_and_their_digest() {
    let user = User::answering(Answer::Accept);
    let setup = asking(user.clone()).await;
    let result = call(&setup, close("ACC-1")).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(text(&result), "closed ACC-1");
    assert_eq!(setup.bank.closed(), 1);
    assert!(setup.failures.all().is_empty());

    let asked = user.asked();
    assert_eq!(asked.len(), 1, "asked once");
    assert_shows_closing_acc_1(&asked[0]);
    assert_balance_is_not_asked_about(&setup, &user).await;
}

/// `question` shows the call that closes ACC-1: the tool, the arguments and their digest, which
/// fills in the form.
fn assert_shows_closing_acc_1(question: &ElicitRequestParams) {
    let digest = CallDigest::of("close_account", &json!({"account": "ACC-1"}));
    assert_eq!(shown_digest(question), digest.to_string());
    let ElicitRequestParams::FormElicitationParams { message, .. } = question else {
        unreachable!()
    };
    for part in [
        "`close_account`",
        "\"account\": \"ACC-1\"",
        &digest.to_string(),
    ] {
        assert!(message.contains(part), "{part} in {message}");
    }
}

/// A tool that needs no approval runs without a question.
async fn assert_balance_is_not_asked_about(setup: &Setup, user: &User) {
    let before = user.asked().len();
    let balance = CallToolRequestParams::new("balance")
        .with_arguments(json!({"account": "ACC-1"}).as_object().unwrap().clone());
    assert_eq!(text(&call(setup, balance).await), "ACC-1: 10.00");
    assert_eq!(user.asked().len(), before);
}

#[tokio::test]
async fn a_declined_or_dismissed_call_is_refused_and_never_runs() {
    // Asked while the call waits, or (protocol 2026-07-28) in an input-required result.
    for lifecycle in [
        ClientLifecycleMode::Initialize,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    ] {
        for (answer, reason) in [
            (Answer::Decline, RefusalReason::Declined),
            (Answer::Cancel, RefusalReason::Cancelled),
            (Answer::AcceptEmpty, RefusalReason::Mismatch),
        ] {
            let user = User::answering(answer);
            let build = |builder: reticent::mcp::McpServerBuilder| builder.elicit_approval(WAIT);
            let setup = connect(user.clone(), build, lifecycle.clone()).await;
            let result = call(&setup, close("ACC-1")).await;
            assert_eq!(result.is_error, Some(true));
            assert_eq!(text(&result), NOT_APPROVED);
            assert_eq!(setup.bank.closed(), 0, "{reason:?}: never run");
            assert_eq!(user.asked().len(), 1);
            let (failure, got) = refusal(&setup.failures);
            assert_eq!(got, reason);
            assert_eq!(failure.shown_to_model, NOT_APPROVED);
            assert_eq!(failure.arguments, json!({"account": "ACC-1"}));
        }
    }
}

#[tokio::test]
async fn an_accept_for_a_call_with_other_arguments_approves_nothing() {
    // The user approved closing ACC-1; the client sends that approval for a call that closes
    // ACC-2 (or accepts with nothing that names a call).
    let approved = CallDigest::of("close_account", &json!({"account": "ACC-1"}));
    for answer in [Answer::AcceptWith(approved), Answer::AcceptEmpty] {
        let user = User::answering(answer.clone());
        let setup = asking(user.clone()).await;
        let result = call(&setup, close("ACC-2")).await;
        assert_eq!(text(&result), NOT_APPROVED, "{answer:?}");
        assert_eq!(setup.bank.closed(), 0, "{answer:?}: never run");
        assert_eq!(refusal(&setup.failures).1, RefusalReason::Mismatch);
        // What the user was shown was the call to ACC-2.
        let shown = CallDigest::of("close_account", &json!({"account": "ACC-2"}));
        assert_eq!(shown_digest(&user.asked()[0]), shown.to_string());
    }
}

#[tokio::test]
async fn arguments_sent_as_json_text_are_shown_and_approved_as_the_json_they_hold() {
    let user = User::answering(Answer::AcceptWith(CallDigest::of(
        "close_account",
        &json!({"account": "ACC-1"}),
    )));
    let setup = asking(user.clone()).await;
    let request = ClientRequest::CustomRequest(CustomRequest::new(
        "tools/call",
        Some(json!({"name": "close_account", "arguments": "{\"account\": \"ACC-1\"}"})),
    ));
    let result = match setup.client.send_request(request).await.unwrap() {
        ServerResult::CustomResult(result) => result.0,
        other => serde_json::to_value(other).unwrap(),
    };
    assert_eq!(result["isError"], json!(false), "{result}");
    assert_eq!(setup.bank.closed(), 1);
    assert_eq!(user.asked().len(), 1);
}

#[tokio::test]
async fn a_question_never_answered_is_a_refusal_after_the_wait() {
    let user = User::answering(Answer::Never);
    let wait = Duration::from_millis(300);
    let setup = setup(user.clone(), |builder| builder.elicit_approval(wait)).await;
    let result = call(&setup, close("ACC-1")).await;
    assert_eq!(text(&result), NOT_APPROVED);
    assert_eq!(setup.bank.closed(), 0);
    assert_eq!(refusal(&setup.failures).1, RefusalReason::NoAnswer(wait));
    assert_eq!(
        refusal(&setup.failures).0.error.to_string(),
        format!(
            "the call `{}` of `close_account` was not approved (no answer within 300ms); it \
             was not run",
            refusal(&setup.failures).0.call_id
        )
    );
}

#[tokio::test]
async fn a_failed_question_is_a_refusal_and_its_error_stays_on_the_server_side() {
    const CANARY: &str = "CANARY-elicitation-9f2c: /home/ops/.secrets";
    let user = User::answering(Answer::Fail(CANARY));
    let setup = asking(user).await;
    let result = call(&setup, close("ACC-1")).await;
    assert_eq!(text(&result), NOT_APPROVED);
    assert!(!serde_json::to_string(&result).unwrap().contains("CANARY"));
    assert_eq!(setup.bank.closed(), 0);
    let (failure, reason) = refusal(&setup.failures);
    assert!(
        matches!(&reason, RefusalReason::Failed(error) if error.contains(CANARY)),
        "{reason:?}"
    );
    assert!(failure.error.to_string().contains(CANARY));
    assert!(!failure.shown_to_model.contains("CANARY"));
}

#[tokio::test]
async fn a_client_that_cannot_ask_its_user_is_refused_unless_trusted_to_ask_itself() {
    const UNAVAILABLE: &str = "Tool 'close_account' needs a person's approval before it runs, \
                               and this client cannot ask its user: it was not run";
    // No elicitation declared.
    let silent = User {
        asks: false,
        ..User::answering(Answer::Accept)
    };
    let setup = asking(silent.clone()).await;
    let result = call(&setup, close("ACC-1")).await;
    assert_eq!(text(&result), UNAVAILABLE);
    assert_eq!(setup.bank.closed(), 0);
    assert_eq!(refusal(&setup.failures).1, RefusalReason::CannotAsk);

    // A call of protocol 2026-07-28 whose own capabilities declare no elicitation, on a
    // connection whose client declared it: the call's capabilities count.
    let user = User::answering(Answer::Accept);
    let setup = asking(user.clone()).await;
    let mut modern = close("ACC-1");
    modern.meta = Some(RequestMetaObject::with_client_context(
        ProtocolVersion::V_2026_07_28,
        Implementation::new("user", "1"),
        ClientCapabilities::default(),
    ));
    let result = call(&setup, modern).await;
    assert_eq!(text(&result), UNAVAILABLE);
    assert_eq!(setup.bank.closed(), 0);
    assert_eq!(refusal(&setup.failures).1, RefusalReason::CannotAsk);
    assert!(user.asked().is_empty());

    // Trusted to ask its user itself, as before elicitation: it runs.
    let setup = setup_trusted(silent).await;
    assert_eq!(text(&call(&setup, close("ACC-1")).await), "closed ACC-1");
    assert_eq!(setup.bank.closed(), 1);

    // A client that can ask is asked even when trusted.
    let user = User::answering(Answer::Decline);
    let setup = setup_trusted(user.clone()).await;
    assert_eq!(text(&call(&setup, close("ACC-1")).await), NOT_APPROVED);
    assert_eq!(user.asked().len(), 1);
    assert_eq!(setup.bank.closed(), 0);
}

async fn setup_trusted(user: User) -> Setup {
    setup(user, |builder| {
        builder.elicit_approval(WAIT).trust_client_approval(true)
    })
    .await
}

#[test]
fn build_takes_a_tool_that_needs_approval_when_the_server_asks_for_it() {
    let bank = Arc::new(Bank::default());
    let error = McpServer::builder()
        .toolbox(Arc::clone(&bank))
        .build()
        .unwrap_err();
    assert!(
        error.to_string().contains(".elicit_approval(wait)"),
        "{error}"
    );
    assert!(
        McpServer::builder()
            .toolbox(bank)
            .elicit_approval(WAIT)
            .build()
            .is_ok()
    );
}

// ---- a client of protocol 2026-07-28: the question in an input-required result ---------------

/// The bank's server, and `user`'s client speaking protocol 2026-07-28 to it: `server/discover`,
/// then requests that each carry their protocol version and capabilities.
async fn modern(
    user: User,
    build: impl FnOnce(reticent::mcp::McpServerBuilder) -> reticent::mcp::McpServerBuilder,
) -> Setup {
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    connect(user, build, lifecycle).await
}

/// One round of a call: the server's answer as it is, without rmcp's client following an
/// input-required result.
async fn once(setup: &Setup, params: CallToolRequestParams) -> CallToolResponse {
    let once = setup.client.peer().call_tool_once(params);
    tokio::time::timeout(Duration::from_secs(30), once)
        .await
        .expect("the call is answered")
        .expect("the call is a response")
}

/// The question of an input-required result, and its state.
fn question_of(response: CallToolResponse) -> (ElicitRequestParams, String) {
    let CallToolResponse::InputRequired(InputRequiredResult {
        input_requests: Some(mut requests),
        request_state: Some(state),
        ..
    }) = response
    else {
        panic!("a question and a state: {response:?}")
    };
    assert_eq!(requests.len(), 1, "{requests:?}");
    match requests.remove("approval") {
        Some(InputRequest::Elicitation(request)) => (request.params, state),
        other => panic!("the approval question: {other:?}"),
    }
}

/// The user's acceptance of the call whose digest is `digest`.
fn accepting(digest: &str) -> ElicitResult {
    ElicitResult::new(ElicitationAction::Accept).with_content(json!({"digest": digest}))
}

/// `params` sent again with `state` and, unless `None`, `answer` to the approval question.
fn again(
    params: CallToolRequestParams,
    state: &str,
    answer: Option<&ElicitResult>,
) -> CallToolRequestParams {
    let params = params.with_request_state(state);
    match answer {
        None => params,
        Some(answer) => params.with_input_responses(InputResponses::from([(
            "approval".to_owned(),
            serde_json::to_value(answer).unwrap(),
        )])),
    }
}

/// The reasons of the refusals the server reported, in order; each shown as `NOT_APPROVED`.
fn reasons(failures: &Failures) -> Vec<RefusalReason> {
    failures
        .all()
        .iter()
        .map(|failure| {
            assert_eq!(failure.shown_to_model, NOT_APPROVED);
            let refused = failure.error.downcast_ref::<ApprovalRefused>().unwrap();
            refused.reason.clone()
        })
        .collect()
}

#[tokio::test]
async fn a_2026_client_is_asked_in_an_input_required_result_and_runs_the_call_it_accepted() {
    let user = User::answering(Answer::Accept);
    let setup = modern(user.clone(), |builder| builder.elicit_approval(WAIT)).await;

    // The first answer is the question: the tool, the arguments and their digest.
    let (question, state) = question_of(once(&setup, close("ACC-1")).await);
    assert_shows_closing_acc_1(&question);
    assert!(!state.is_empty());
    assert_eq!(setup.bank.closed(), 0, "not run before the answer");
    assert!(
        user.asked().is_empty(),
        "the server sent no request of its own"
    );

    // rmcp's client asks its user and sends the call again with the answer: it runs.
    let result = call(&setup, close("ACC-1")).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(text(&result), "closed ACC-1");
    assert_eq!(setup.bank.closed(), 1);
    assert_eq!(user.asked().len(), 1);
    assert_shows_closing_acc_1(&user.asked()[0]);
    assert!(setup.failures.all().is_empty());
    assert_balance_is_not_asked_about(&setup, &user).await;
}

#[tokio::test]
async fn a_2026_approval_approves_only_the_call_shown_and_only_once() {
    let user = User::answering(Answer::Accept);
    let setup = modern(user, |builder| builder.elicit_approval(WAIT)).await;
    let digest =
        |account: &str| CallDigest::of("close_account", &json!({"account": account})).to_string();

    // The user was shown ACC-1 and accepted; the call comes back to close ACC-2.
    let (question, state) = question_of(once(&setup, close("ACC-1")).await);
    let accepted = accepting(&shown_digest(&question));
    let result = once(&setup, again(close("ACC-2"), &state, Some(&accepted))).await;
    let CallToolResponse::Complete(result) = result else {
        panic!("refused: {result:?}")
    };
    assert_eq!(text(&result), NOT_APPROVED);
    // The state was used by that call: not even the call shown runs with it now.
    let result = call(&setup, again(close("ACC-1"), &state, Some(&accepted))).await;
    assert_eq!(text(&result), NOT_APPROVED);

    // An acceptance that names another call's digest.
    let (_, state) = question_of(once(&setup, close("ACC-1")).await);
    let other = accepting(&digest("ACC-2"));
    let result = call(&setup, again(close("ACC-1"), &state, Some(&other))).await;
    assert_eq!(text(&result), NOT_APPROVED);

    // The state without an answer.
    let (_, state) = question_of(once(&setup, close("ACC-1")).await);
    let result = call(&setup, again(close("ACC-1"), &state, None)).await;
    assert_eq!(text(&result), NOT_APPROVED);

    // A state the server never sent.
    let forged = digest("ACC-1");
    let result = call(&setup, again(close("ACC-1"), &forged, Some(&accepted))).await;
    assert_eq!(text(&result), NOT_APPROVED);

    // An answer with no state was never asked for: the call is asked about again.
    let unasked = close("ACC-1").with_input_responses(InputResponses::from([(
        "approval".to_owned(),
        serde_json::to_value(&accepted).unwrap(),
    )]));
    question_of(once(&setup, unasked).await);
    assert_eq!(setup.bank.closed(), 0, "nothing ran");

    // The call shown, accepted: it runs, once; the same answer sent again runs nothing.
    let (question, state) = question_of(once(&setup, close("ACC-1")).await);
    let accepted = accepting(&shown_digest(&question));
    let result = call(&setup, again(close("ACC-1"), &state, Some(&accepted))).await;
    assert_eq!(text(&result), "closed ACC-1");
    let result = call(&setup, again(close("ACC-1"), &state, Some(&accepted))).await;
    assert_eq!(text(&result), NOT_APPROVED);
    assert_eq!(setup.bank.closed(), 1);

    use RefusalReason::{Mismatch, Stale, Unanswered};
    assert_eq!(
        reasons(&setup.failures),
        [Mismatch, Stale, Mismatch, Unanswered, Stale, Stale]
    );
}

#[tokio::test]
async fn a_2026_question_is_answered_within_the_wait_or_not_at_all() {
    let wait = Duration::from_millis(200);
    let setup = modern(User::answering(Answer::Accept), |builder| {
        builder.elicit_approval(wait)
    })
    .await;
    let (question, state) = question_of(once(&setup, close("ACC-1")).await);
    tokio::time::sleep(wait * 2).await;
    let accepted = accepting(&shown_digest(&question));
    let result = call(&setup, again(close("ACC-1"), &state, Some(&accepted))).await;
    assert_eq!(text(&result), NOT_APPROVED);
    assert_eq!(setup.bank.closed(), 0);
    assert_eq!(reasons(&setup.failures), [RefusalReason::Stale]);
    assert_eq!(
        setup.failures.one().error.to_string(),
        format!(
            "the call `{}` of `close_account` was not approved (the request state names no \
             question still waiting); it was not run",
            setup.failures.one().call_id
        )
    );
}

#[tokio::test]
async fn a_2026_client_without_elicitation_is_refused_unless_trusted_to_ask_itself() {
    let silent = User {
        asks: false,
        ..User::answering(Answer::Accept)
    };
    let setup = modern(silent.clone(), |builder| builder.elicit_approval(WAIT)).await;
    let result = call(&setup, close("ACC-1")).await;
    assert_eq!(
        text(&result),
        "Tool 'close_account' needs a person's approval before it runs, and this client cannot \
         ask its user: it was not run"
    );
    assert_eq!(setup.bank.closed(), 0);
    assert_eq!(refusal(&setup.failures).1, RefusalReason::CannotAsk);

    let setup = modern(silent.clone(), |builder| {
        builder.elicit_approval(WAIT).trust_client_approval(true)
    })
    .await;
    assert_eq!(text(&call(&setup, close("ACC-1")).await), "closed ACC-1");
    assert_eq!(setup.bank.closed(), 1);
    assert!(silent.asked().is_empty());
}

#[tokio::test]
async fn a_2026_call_whose_arguments_are_json_text_is_asked_and_approved_as_that_json() {
    let setup = modern(User::answering(Answer::Accept), |builder| {
        builder.elicit_approval(WAIT)
    })
    .await;
    let meta = serde_json::to_value(RequestMetaObject::with_client_context(
        ProtocolVersion::V_2026_07_28,
        Implementation::new("user", "1"),
        ClientCapabilities::builder().enable_elicitation().build(),
    ))
    .unwrap();
    let send = |params: Value| async {
        let request = ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(params)));
        match setup.client.send_request(request).await.unwrap() {
            ServerResult::CustomResult(result) => result.0,
            other => serde_json::to_value(other).unwrap(),
        }
    };
    let params = json!({
        "_meta": meta,
        "name": "close_account",
        "arguments": "{\"account\": \"ACC-1\"}",
    });
    let first = send(params.clone()).await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let question = &first["inputRequests"]["approval"];
    assert_eq!(question["method"], "elicitation/create", "{first}");
    let digest = CallDigest::of("close_account", &json!({"account": "ACC-1"})).to_string();
    assert_eq!(
        question["params"]["requestedSchema"]["properties"]["digest"]["default"],
        digest
    );
    assert_eq!(setup.bank.closed(), 0);

    let mut retry = params;
    retry["requestState"] = first["requestState"].clone();
    retry["inputResponses"] = json!({"approval": accepting(&digest)});
    let result = send(retry).await;
    assert_eq!(result["isError"], json!(false), "{result}");
    assert_eq!(setup.bank.closed(), 1);
}

// ---- a tool asks the client's user: ToolContext::elicit --------------------------------------

/// Asks the user for a nickname, waiting `wait_ms` for the answer.
#[reticent::tool]
async fn nickname(
    /// How long to wait for the answer, in milliseconds.
    wait_ms: u64,
    cx: &reticent::ToolContext,
) -> Result<String, AskError> {
    let form = ElicitationSchema::builder()
        .required_string("nickname")
        .build_unchecked();
    let wait = Duration::from_millis(wait_ms);
    Ok(match cx.elicit("Your nickname?", form, wait).await? {
        Elicited::Accepted(content) => format!("hello {}", content["nickname"]),
        Elicited::Declined => "declined".to_owned(),
        Elicited::Cancelled => "cancelled".to_owned(),
        _ => "unknown".to_owned(),
    })
}

/// A server of `nickname` whose client is `user`.
async fn nickname_setup(user: User) -> Setup {
    setup(user, |builder| builder.tool(Nickname).elicit_approval(WAIT)).await
}

fn ask_nickname(wait_ms: u64) -> CallToolRequestParams {
    let Value::Object(arguments) = json!({"wait_ms": wait_ms}) else {
        unreachable!()
    };
    CallToolRequestParams::new("nickname").with_arguments(arguments)
}

/// The error the one failure reported carries, as an `AskError`.
fn ask_error(failures: &Failures) -> String {
    let failure = failures.one();
    assert_eq!(failure.kind, "AskError");
    assert_eq!(
        failure.shown_to_model,
        "Tool 'nickname' failed with AskError"
    );
    let error = failure
        .error
        .downcast_ref::<AskError>()
        .expect("an AskError");
    format!("{error:?}")
}

#[tokio::test]
async fn a_tool_asks_the_clients_user_and_gets_the_answer() {
    let user = User::answering(Answer::Content(json!({"nickname": "Ada"})));
    let setup = nickname_setup(user.clone()).await;
    let result = call(&setup, ask_nickname(10_000)).await;
    assert_eq!(text(&result), "hello \"Ada\"");
    let ElicitRequestParams::FormElicitationParams { message, .. } = &user.asked()[0] else {
        unreachable!()
    };
    assert_eq!(message, "Your nickname?");

    let user = User::answering(Answer::Decline);
    let setup = nickname_setup(user).await;
    assert_eq!(text(&call(&setup, ask_nickname(10_000)).await), "declined");
}

#[tokio::test]
async fn a_tool_cannot_ask_a_client_without_elicitation_nor_wait_past_its_bound() {
    let silent = User {
        asks: false,
        ..User::answering(Answer::Accept)
    };
    let setup = nickname_setup(silent.clone()).await;
    let result = call(&setup, ask_nickname(10_000)).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(ask_error(&setup.failures), "NotSupported(\"elicitation\")");
    assert!(silent.asked().is_empty());

    let user = User::answering(Answer::Never);
    let setup = nickname_setup(user).await;
    let result = call(&setup, ask_nickname(200)).await;
    assert_eq!(text(&result), "Tool 'nickname' failed with AskError");
    assert_eq!(ask_error(&setup.failures), "NoAnswer(200ms)");
}

#[tokio::test]
async fn a_tool_asked_to_ask_in_an_agent_has_nobody_to_ask() {
    let model = reticent::ScriptedModel::new(vec![
        reticent::ModelResponse::tool_call("c1", "nickname", json!({"wait_ms": 10_000})),
        reticent::ModelResponse::text("done"),
    ]);
    let result = reticent::Agent::builder(model)
        .tool(Nickname)
        .build()
        .unwrap()
        .run("ask")
        .await
        .unwrap();
    let failure = &result.tool_failures[0];
    assert_eq!(
        failure.shown_to_model,
        "Tool 'nickname' failed with AskError"
    );
    assert!(matches!(
        failure.error.downcast_ref::<AskError>(),
        Some(AskError::NoClient)
    ));
}

// ---- the MCP Python SDK's client as the user ---------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdks_client_approves_declines_and_cannot_carry_an_approval_over() {
    let Some(python) = reticent_tests::mcp::python::python(
        "approvals over MCP with the Python SDK's elicitation callback",
    ) else {
        return;
    };
    let bank = Arc::new(Bank::default());
    let failures = Failures::default();
    let server = McpServer::builder()
        .toolbox(Arc::clone(&bank))
        .on_failure(failures.hook())
        .elicit_approval(WAIT)
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let shutdown = reticent::CancellationToken::new();
    let mut config =
        reticent::mcp::rmcp::transport::streamable_http_server::StreamableHttpServerConfig::default(
        );
    config.cancellation_token = shutdown.clone();
    let serving = tokio::spawn(server.serve_http(listener, config));

    let script = reticent_tests::mcp::python::workspace().join("tests/mcp_client/approval.py");
    let mut command = tokio::process::Command::new(&python);
    command.arg(&script).arg(&url).kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(120), command.output())
        .await
        .expect("the script finishes in time")
        .expect("the script runs");
    shutdown.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(10), serving).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the script failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{stdout}");

    let digest = |account: &str| CallDigest::of("close_account", &json!({"account": account}));
    // Accepted as shown: it ran, after the user saw the call and its digest.
    assert_eq!(lines[0]["text"], "closed ACC-1", "{stdout}");
    assert_eq!(lines[0]["is_error"], false);
    assert_eq!(lines[0]["shown"]["digest"], digest("ACC-1").to_string());
    let message = lines[0]["shown"]["message"].as_str().unwrap();
    assert!(
        message.contains("close_account") && message.contains("ACC-1"),
        "{message}"
    );
    // Declined, and the approval of ACC-1 carried over to ACC-2: refused, never run.
    for line in &lines[1..] {
        assert_eq!(line["text"], NOT_APPROVED, "{stdout}");
        assert_eq!(line["is_error"], true);
    }
    assert_eq!(lines[2]["shown"]["digest"], digest("ACC-2").to_string());
    assert_eq!(bank.closed(), 1, "only the accepted call ran");
    let reasons: Vec<RefusalReason> = failures
        .all()
        .iter()
        .map(|f| {
            f.error
                .downcast_ref::<ApprovalRefused>()
                .unwrap()
                .reason
                .clone()
        })
        .collect();
    assert_eq!(reasons, [RefusalReason::Declined, RefusalReason::Mismatch]);
}

#[tokio::test]
async fn a_failed_question_of_a_tool_reaches_the_operator_and_not_the_client() {
    const CANARY: &str = "CANARY-ask-51d0: postgres://ops:hunter2@db";
    let user = User::answering(Answer::Fail(CANARY));
    let setup = nickname_setup(user).await;
    let result = call(&setup, ask_nickname(10_000)).await;
    assert_eq!(text(&result), "Tool 'nickname' failed with AskError");
    assert!(!serde_json::to_string(&result).unwrap().contains("CANARY"));
    let failure = setup.failures.one();
    assert!(!failure.shown_to_model.contains("CANARY"));
    let error = failure
        .error
        .downcast_ref::<AskError>()
        .expect("an AskError");
    assert!(matches!(error, AskError::Failed(_)), "{error:?}");
    let mut chain = Vec::new();
    let mut source: Option<&dyn std::error::Error> = Some(error);
    while let Some(error) = source {
        chain.push(error.to_string());
        source = error.source();
    }
    assert!(
        chain.iter().any(|message| message.contains(CANARY)),
        "{chain:?}"
    );
}
