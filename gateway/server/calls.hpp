#pragma once
// Running the work of a request that reaches upstreams, with a way back to
// its client: streamed to a client of the session revisions, suspended and
// resumed (saga/engine.hpp) for a client of the stateless revision (MRTR) or
// of the saga methods.
#include <functional>
#include <memory>
#include <string>

#include "server/client_call.hpp"
#include "server/methods.hpp"

namespace mcpgw::server {

/// The work of one request on upstreams, given the way back to its client,
/// the signal that cancels it and its progress reporter (null: the client
/// asked for no progress). It owns everything it reads: a suspended call's
/// work outlives the request that started it.
using Work = std::function<Task<upstream::Reply>(std::shared_ptr<ClientCall>, CancelSignal&, Progress*)>;

/// How many requests a call's client may be asked (limits.max_client_requests_*),
/// and the redaction of what upstreams send it, under the configuration in force.
ClientCallSettings client_settings(const Services& sv);

/// Runs `work` for `r`: streamed to a session's client, suspended for a
/// stateless one (MRTR: `input_required` and a signed requestState; a
/// retry resumes it). `target` and `args` identify the request in its
/// requestState.
Task<Answer> execute(Services& sv, Request& r, std::string target, const json::Value* args, Work work);

/// Drives a suspendable call for `r` until it ends or asks: resumes
/// `parked` with `answers`, or when `parked` is null starts `work` (a first
/// call, or a replay answered from `answers`); `parked` is then the call to
/// park. `sagas`: the client answers whatever it is asked (no capability
/// check).
Task<saga::Engine::Outcome> drive(Services& sv, Request& r, std::shared_ptr<saga::Parked>& parked,
                                  const json::Value& answers, Work work, bool sagas);


/// Writes the audit line of one round of a suspendable call for `r`
/// (`event`: mrtr_round or saga_round) that ended with `outcome` after
/// `ms`: a result, or questions for the client.
void audit_round(Services& sv, Request& r, std::string_view event, std::string_view tool, const json::Value* args,
                 const saga::Engine::Outcome& outcome, double ms);

/// Options of an upstream call made for `caller` through `client`,
/// bounded by `origin`'s timeout and `cancel`.
upstream::CallOptions options_for(const upstream::ToolOrigin& origin, CancelSignal& cancel,
                                  const upstream::Caller& caller, std::shared_ptr<ClientCall> client);

}  // namespace mcpgw::server
