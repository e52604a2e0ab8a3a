#pragma once
// An OAuth upstream's connections send their server's token (oauth::Client)
// for the principal they belong to ("" = the gateway's own identity).
#include <memory>
#include <string>

#include "oauth/client.hpp"
#include "transport/credential.hpp"

namespace mcpgw::upstream {

/// The credential of a connection of `client`'s server for `principal`.
std::shared_ptr<transport::Credential> credential_for(std::shared_ptr<oauth::Client> client, std::string principal);

}  // namespace mcpgw::upstream
