-- The Prosody 0.12 environment that published prosody-modules use.
module:depends("http")
local jid = require "util.jid"
local st = require "util.stanza"
local uuid = require "util.uuid"
local id = require "util.id"
local datetime = require "util.datetime"
local nodeprep = require "util.encodings".stringprep.nodeprep
local lfs = require "lfs"

local loaded = false
function module.load() loaded = true end

local list = module:shared("list")

local function join(...)
	local out = {}
	for i = 1, select("#", ...) do out[i] = tostring((select(i, ...))) end
	return table.concat(out, " ")
end

module:provides("http", {
	route = {
		["GET /jid"] = function()
			local a, b, c = jid.split("Alice@Example.COM/phone")
			local d, e, f = jid.prepped_split("Alice@Example.COM.")
			return join(a, b, c, jid.bare("a@b/c"), d, e, f, jid.join("a", "b", "c"), jid.split("@b"),
				jid.split("a@"), jid.split("a/"), jid.compare("a@b/c", "b"), jid.compare("a@b/c", "x@b"))
		end,
		["GET /stanza"] = function()
			local s = st.stanza("result", { x = "1<" }):tag("jid"):text("a&b"):up():tag("empty"):up():text_tag("show", "online")
			return join(tostring(s), s:get_child_text("jid"), s:child_with_name("show"):get_text(), st.is_stanza(s))
		end,
		["GET /ids"] = function()
			return join(#uuid.generate(), uuid.generate():match("^%x+%-%x+%-4%x+%-[89ab]%x+%-%x+$") ~= nil,
				#id.tiny(), #id.short(), #id.medium(), #id.long(), id.short():match("^[%w_-]+$") ~= nil)
		end,
		["GET /datetime"] = function()
			return join(datetime.date(86400 * 365), datetime.datetime(1700000000), datetime.time(3661),
				datetime.parse("2023-11-14T22:13:20Z"), ("%.1f"):format(datetime.parse("2023-11-14T23:13:20.5+01:00")), datetime.parse("nope"))
		end,
		["GET /env"] = function(event)
			event.request.log("info", "request log %s", "line");
			(event.request.log or module._log)("warn", "module log %d", 7)
			return join(prosody.process_type, type(hosts), next(hosts), module:get_host(), module:get_host_type(),
				loaded, module:get_directory():match("testdata$") ~= nil, nodeprep("Alice"), nodeprep("a b"),
				lfs.attributes(module:get_directory(), "mode"), (lfs.attributes("/nonexistent/x")))
		end,
		["GET /list"] = function()
			table.insert(list, "b")
			table.insert(list, 1, { name = "a" })
			table.insert(list, "c")
			local removed = table.remove(list)
			local first = table.remove(list, 1)
			return join(#list, list[1], removed, first.name)
		end,
	},
})
