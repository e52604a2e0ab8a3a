#include "upstream/breaker.hpp"

namespace mcpgw::upstream {

std::string_view state_name(Breaker::State s) {
  switch (s) {
    case Breaker::State::Closed: return "closed";
    case Breaker::State::Open: return "open";
    case Breaker::State::HalfOpen: return "half_open";
  }
  return "closed";
}

std::optional<Breaker::Ticket> Breaker::admit(std::string& why) {
  if (!enabled()) return Ticket{};
  util::MutexLock lk(mu_);
  if (state_ == State::Closed) return Ticket{};
  auto now = now_();
  auto reopen = opened_at_ + std::chrono::milliseconds(cfg_.open_ms);
  if (state_ == State::Open && now >= reopen) state_ = State::HalfOpen;
  if (state_ == State::HalfOpen && !probing_) {
    probing_ = true;
    return Ticket{true};
  }
  if (state_ == State::HalfOpen) {
    why = "circuit open after " + std::to_string(consecutive_) + " consecutive failures; a probe call is in flight";
  } else {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(reopen - now).count();
    why = "circuit open after " + std::to_string(consecutive_) + " consecutive failures; next try in " +
          std::to_string(left) + " ms";
  }
  return std::nullopt;
}

std::optional<Breaker::State> Breaker::record(const Ticket& t, bool ok) {
  if (!enabled()) return std::nullopt;
  util::MutexLock lk(mu_);
  State before = state_;
  if (t.probe) probing_ = false;
  if (ok) {
    consecutive_ = 0;
    // A call admitted before the breaker opened may succeed late: only the
    // probe closes an open breaker.
    if (state_ == State::HalfOpen && t.probe) state_ = State::Closed;
  } else {
    ++consecutive_;
    if ((state_ == State::Closed && consecutive_ >= cfg_.failures) || (state_ == State::HalfOpen && t.probe)) {
      state_ = State::Open;
      opened_at_ = now_();
    }
  }
  if (state_ == before) return std::nullopt;
  return state_;
}

void Breaker::release(const Ticket& t) {
  if (!t.probe) return;
  util::MutexLock lk(mu_);
  probing_ = false;
}

Breaker::State Breaker::state() const {
  util::MutexLock lk(mu_);
  // An open breaker whose time is up lets the next call probe.
  if (state_ == State::Open && now_() >= opened_at_ + std::chrono::milliseconds(cfg_.open_ms))
    return State::HalfOpen;
  return state_;
}

}  // namespace mcpgw::upstream
