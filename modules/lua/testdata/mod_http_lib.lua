-- The Lua library: os.date/os.time as Lua 5.1, option getters, util.*.
module:depends("http")
local json = require "util.json"
local enc = require "util.encodings"
local hashes = require "util.hashes"
local set = require "util.set"
local http = require "net.http"

module:provides("http", {
	route = {
		["GET /date"] = function(event)
			local q = http.formdecode(event.request.url.query or "")
			local t = tonumber(q.t)
			return os.date(q.f, t)
		end,
		["GET /datet"] = function(event)
			local d = os.date("!*t", 86400 * 365 + 3661)
			local l = os.date("*t", 0)
			return table.concat({ d.year, d.month, d.day, d.hour, d.min, d.sec, d.wday, d.yday, tostring(d.isdst),
				type(l), type(l.isdst) }, " ")
		end,
		["GET /time"] = function()
			local t = os.time({ year = 2020, month = 2, day = 30, hour = 0 })
			local d = os.date("*t", t)
			local noon = os.time({ year = 2020, month = 1, day = 1 })
			local ok, err = pcall(os.time, { year = 2020, month = 1 })
			return table.concat({ d.year, d.month, d.day, d.hour, os.date("%H", noon), tostring(ok), err }, "|")
		end,
		["GET /set"] = function()
			local s = module:get_option_set("names", {})
			local items = {}
			for x in s do items[#items + 1] = x end
			table.sort(items)
			local viaitems = 0
			for _ in s:items() do viaitems = viaitems + 1 end
			local u = s + set.new({ "zed" })
			return table.concat({ tostring(s:contains("b")), tostring(s:contains("nope")), table.concat(items, ","),
				viaitems, tostring(u:contains("zed")), tostring(set.is_set(u)), tostring(s:empty()) }, " ")
		end,
		["GET /options"] = function()
			return table.concat({
				tostring(module:get_option_string("num")), type(module:get_option_string("num")),
				tostring(module:get_option_number("numstr")), tostring(module:get_option_number("num", 0, 0, 10)),
				tostring(module:get_option_integer("float")), tostring(module:get_option_boolean("yes")),
				tostring(module:get_option_boolean("no_str")), tostring(module:get_option_boolean("missing")),
				tostring(module:get_option_string("list")), #module:get_option_array("one"),
				tostring(module:get_option_period("period")), tostring(module:get_option_string("missing", "dflt")),
			}, " ")
		end,
		["GET /json"] = function()
			local v = json.decode('{"a":[1,2,{"b":null}],"c":"d\\u00e9"}')
			return json.encode({ list = v.a, c = v.c, isnull = v.a[3].b == json.null, empty = {}, n = 1.5 })
		end,
		["GET /enc"] = function()
			return table.concat({ enc.base64.encode("hello"), enc.base64.decode("aGVs\nbG8="), enc.url.encode("a b/c"),
				enc.url.decode("a%20b"), hashes.sha256("abc", true), hashes.hmac_sha256("key", "msg", true),
				#hashes.sha256("abc") }, " ")
		end,
	},
})
