-- The node IQ-Stream itself places a new run on, for HAProxy (deploy/haproxy/haproxy-sticky.cfg).
--
-- IQ-Stream nodes started with --peers place a new run on its rendezvous owner among the ready nodes
-- (server/src/main/java/io/iqstream/server/cluster/Rendezvous.java), wherever its first request lands: a
-- balancer that picks another node (leastconn, its own hash) costs that run a relayed hop on every request,
-- because the balancer keeps sending it to the node it picked. This converter computes the same owner over the
-- backend's servers that take new runs (UP, not in drain or maintenance), so the stick table records the node
-- that holds the run.
--
--   lua-load iqstream-rendezvous.lua
--   http-request set-var(txn.owner) var(txn.runid),lua.iqstream_owner(iqstream)
--   use-server node1 if { var(txn.owner) -m str node1 }     (one line per server)
--
-- A server's key is the address HAProxy has for it ("ip:port"): start each node with --advertise set to that
-- same address. Where HAProxy's set and the nodes' differ (a node at its memory budget is UP here but not ready
-- for its peers; a check not yet run) the node that gets the run relays it once per request: correct, one hop.
-- Lua 5.3 integers are 64-bit two's complement: * wraps, >> is logical, math.ult compares unsigned, as in Java.

local function fnv64(s)
    local h = 0xcbf29ce484222325
    for i = 1, #s do
        h = (h ~ s:byte(i)) * 0x100000001b3
    end
    return h
end

local function fmix64(k)
    k = k ~ (k >> 33)
    k = k * 0xff51afd7ed558ccd
    k = k ~ (k >> 33)
    k = k * 0xc4ceb9fe1a85ec53
    k = k ~ (k >> 33)
    return k
end

-- UP (or "UP 1/2": failing checks, still serving); a drained server reports "DRAIN", one in maintenance "MAINT"
local function takes_new_runs(server)
    local status = server:get_stats()["status"] or ""
    return status:sub(1, 2) == "UP" or status == "no check"
end

-- The name of the server that owns run_id among the backend's servers taking new runs; nil when none does.
core.register_converters("iqstream_owner", function(run_id, backend)
    local be = core.backends[backend]
    if run_id == nil or be == nil then
        return nil
    end
    local run_hash = fnv64(run_id)
    local best_name, best_key, best_weight
    for name, server in pairs(be.servers) do
        if takes_new_runs(server) then
            local key = server:get_addr()
            local w = fmix64(run_hash ~ (fnv64(key) * 0x9E3779B97F4A7C15))
            if best_name == nil or math.ult(best_weight, w) or (w == best_weight and key < best_key) then
                best_name, best_key, best_weight = name, key, w
            end
        end
    end
    return best_name
end)
