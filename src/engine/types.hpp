// The market vocabulary the engine speaks (src/market), named in the engine's
// namespace so engine code and its callers write engine::Side, engine::Price,
// engine::EngineConfig. The types are the market's: the exchange and the
// trading client use them from there, without depending on the engine.
#pragma once

#include "market/instrument_table.hpp"
#include "market/level_view.hpp"
#include "market/reject_reason.hpp"
#include "market/types.hpp"

namespace nanotick::engine {

using market::ClientId;
using market::ClientOrderId;
using market::InstrumentId;
using market::OrderId;
using market::Price;
using market::Qty;
using market::Seq;

using market::kMaxClientId;
using market::kMaxClientOrderId;

using market::opposite;
using market::OrderType;
using market::Side;
using market::StpMode;

using market::RejectReason;
using market::to_string;

using market::LevelView;

// The engine's static configuration is the venue's instrument table (its
// capacities included): validated once at start-up, never changed while running.
using market::InstrumentConfig;
using EngineConfig = market::InstrumentTable;

}  // namespace nanotick::engine
