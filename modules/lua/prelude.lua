-- prelude.lua: the parts of cairn's module API written in Lua: util.set,
-- util.jid, util.stanza, the typed option getters and module:handle_items,
-- following Prosody 0.12's behaviour (util/set.lua, util/jid.lua,
-- util/stanza.lua, core/moduleapi.lua). Run once in every new state with
-- (module, set, jid, stanza, json, timer) as arguments: the tables to fill.
local module, set, jid, st, json, timer = ...

local set_mt = { __name = "set" }

-- "for x in s do" walks the items: the generic for calls s(nil, last).
function set_mt.__call(s, _, last)
	return next(s._items, last)
end

local function iterable_items()
	-- The items table can also be called as an iterator.
	return setmetatable({}, { __call = function(items, _, last) return next(items, last) end })
end

function set.new(list)
	local items = iterable_items()
	local s = { _items = items }
	function s:add(x) items[x] = true end
	function s:contains(x) return items[x] end
	function s:contains_set(other)
		for x in other do
			if not items[x] then return false end
		end
		return true
	end
	function s:items() return next, items end
	function s:remove(x) items[x] = nil end
	function s:add_list(list)
		if list then
			for _, x in ipairs(list) do items[x] = true end
		end
	end
	function s:include(other)
		for x in other do items[x] = true end
	end
	function s:exclude(other)
		for x in other do items[x] = nil end
	end
	function s:empty() return next(items) == nil end
	s:add_list(list)
	return setmetatable(s, set_mt)
end

function set.is_set(o) return getmetatable(o) == set_mt end

function set.union(a, b)
	local out = set.new()
	for x in pairs(a._items) do out._items[x] = true end
	for x in pairs(b._items) do out._items[x] = true end
	return out
end

function set.difference(a, b)
	local out = set.new()
	for x in pairs(a._items) do
		if not b._items[x] then out._items[x] = true end
	end
	return out
end

function set.intersection(a, b)
	local out = set.new()
	for x in pairs(a._items) do
		if b._items[x] then out._items[x] = true end
	end
	return out
end

function set.xor(a, b)
	return set.difference(set.union(a, b), set.intersection(a, b))
end

set_mt.__add = set.union
set_mt.__sub = set.difference
function set_mt.__div(s, f)
	local out = set.new()
	for x in pairs(s._items) do
		local y = f(x)
		if y ~= nil then out._items[y] = true end
	end
	return out
end
function set_mt.__eq(a, b)
	if getmetatable(a) ~= set_mt or getmetatable(b) ~= set_mt then return false end
	for x in pairs(a._items) do
		if not b._items[x] then return false end
	end
	for x in pairs(b._items) do
		if not a._items[x] then return false end
	end
	return true
end
function set_mt.__tostring(s)
	local parts = {}
	for x in pairs(s._items) do parts[#parts + 1] = tostring(x) end
	return "{" .. table.concat(parts, ", ") .. "}"
end

-- Typed option getters on top of module:get_option (a Go function).

function module:get_option_scalar(name, default)
	local v = self:get_option(name, default)
	if type(v) == "table" then
		if #v > 1 then
			self:log("error", "Config option '%s' does not take a list, using just the first item", name)
		end
		v = v[1]
	end
	return v
end

function module:get_option_string(name, default)
	local v = self:get_option_scalar(name, default)
	if v == nil then return nil end
	return tostring(v)
end

function module:get_option_number(name, default, min, max)
	local v = self:get_option_scalar(name, default)
	local n = tonumber(v)
	if v ~= nil and n == nil then
		self:log("error", "Config option '%s' not understood, expecting a number", name)
		return nil
	end
	if n == default then return n end
	if min and n < min then
		self:log("warn", "Config option '%s' out of bounds %g < %g", name, n, min)
		return min
	end
	if max and n > max then
		self:log("warn", "Config option '%s' out of bounds %g > %g", name, n, max)
		return max
	end
	return n
end

function module:get_option_integer(name, default, min, max)
	local n = self:get_option_number(name, default, min or -2 ^ 52, max or 2 ^ 53)
	if n == default or n == nil then return n end
	if n ~= math.floor(n) then
		self:log("warn", "Config option '%s' expected an integer, not a float (%g)", name, n)
		return math.floor(n)
	end
	return n
end

function module:get_option_boolean(name, ...)
	local v = self:get_option_scalar(name, ...)
	if v == nil then return nil end
	if v == true or v == "true" or v == 1 then return true end
	if v == false or v == "false" or v == 0 then return false end
	self:log("error", "Config option '%s' not understood, expecting true/false", name)
	return nil
end

function module:get_option_array(name, ...)
	local v = self:get_option(name, ...)
	if v == nil then return nil end
	if type(v) ~= "table" then return { v } end
	local copy = {}
	for i, x in ipairs(v) do copy[i] = x end
	return copy
end

function module:get_option_set(name, ...)
	local list = self:get_option_array(name, ...)
	if list == nil then return nil end
	return set.new(list)
end

local period_units = {
	second = 1, minute = 60, hour = 3600, day = 86400, week = 604800,
	month = 2629746, year = 31556952,
}

function module:get_option_period(name, default, min, max)
	local v = self:get_option_scalar(name, default)
	local secs
	if v == "never" or v == false then
		return math.huge
	elseif type(v) == "number" then
		secs = v
	elseif type(v) == "string" then
		local n, unit = v:match("^%s*(%d+%.?%d*)%s*(%a+)%s*$")
		unit = unit and unit:lower():gsub("s$", "")
		if n and period_units[unit] then
			secs = tonumber(n) * period_units[unit]
		else
			secs = tonumber(v)
		end
		if secs == nil then
			self:log("error", "Config option '%s' not understood, expecting a period (e.g. \"2 days\")", name)
			return nil
		end
	end
	if secs == nil then return nil end
	if min and secs < min then return min end
	if max and secs > max then return max end
	return secs
end

-- module._log is the module's logger as a plain function; module:log
-- calls it in Prosody.

-- Items (module:add_item, module:handle_items): cairn keeps no registry
-- of items across modules, so handle_items sees the items added after it
-- (through the item-added and item-removed events), not earlier ones.
function module:add_item(kind, item)
	self:fire_event("item-added/" .. kind, { item = item })
end

function module:remove_item(kind, item)
	self:fire_event("item-removed/" .. kind, { item = item })
end

function module:handle_items(kind, added, removed)
	self:hook("item-added/" .. kind, added)
	self:hook("item-removed/" .. kind, removed)
end

json.encode_ordered = json.encode_ordered or json.encode

-- util.timer.add_task(delay, f) is module:add_timer: f's number answer
-- runs it again after that many seconds.
function timer.add_task(delay, f) return module:add_timer(delay, f) end

-- util.jid: node@host/resource. split returns nil for a string that is
-- not one (an empty part, or a second @ before the host).
function jid.split(s)
	if type(s) ~= "string" then return nil end
	local node, rest = s:match("^([^@/]+)@(.*)$")
	if not node then
		if s:match("^@") then return nil end
		rest = s
	end
	local host, resource = rest:match("^([^@/]+)/(.+)$")
	if not host then
		host = rest:match("^([^@/]+)$")
		if not host then return nil end
	end
	return node, host, resource
end

function jid.bare(s)
	local node, host = jid.split(s)
	if not host then return nil end
	if node then return node .. "@" .. host end
	return host
end

function jid.node(s) return (jid.split(s)) end
function jid.host(s) local _, host = jid.split(s); return host end
function jid.resource(s) local _, _, res = jid.split(s); return res end

function jid.join(node, host, resource)
	if not host then return nil end
	local s = host
	if node then s = node .. "@" .. s end
	if resource then s = s .. "/" .. resource end
	return s
end

-- prepped_split lower-cases node and host and drops a host's final dot
-- (what stringprep's nodeprep and nameprep do to ASCII); parts longer
-- than 1023 bytes are refused.
function jid.prepped_split(s)
	local node, host, resource = jid.split(s)
	if not host then return nil end
	host = host:gsub("%.$", ""):lower()
	if host == "" or #host > 1023 then return nil end
	if node then
		node = node:lower()
		if #node > 1023 then return nil end
	end
	if resource and #resource > 1023 then return nil end
	return node, host, resource
end

function jid.prep(s)
	local node, host, resource = jid.prepped_split(s)
	if not host then return nil end
	return jid.join(node, host, resource)
end

function jid.compare(s, acl)
	local node, host, resource = jid.split(s)
	local anode, ahost, aresource = jid.split(acl)
	return (anode == nil or anode == node) and ahost == host and (aresource == nil or aresource == resource)
end

-- util.stanza: an XML element with a cursor (tag descends, up climbs),
-- serialised by tostring.
local stanza_mt = { __name = "stanza" }
stanza_mt.__index = stanza_mt
st.stanza_mt = stanza_mt

function st.stanza(name, attr)
	if type(name) ~= "string" then error("invalid stanza name: " .. tostring(name), 2) end
	local s = { name = name, attr = attr or {}, tags = {} }
	return setmetatable(s, stanza_mt)
end

function st.is_stanza(s) return getmetatable(s) == stanza_mt end

local function cursor(s)
	local c = rawget(s, "_cursor")
	return c and c[#c] or s
end

function stanza_mt:tag(name, attr)
	local child = st.stanza(name, attr)
	local cur = cursor(self)
	cur[#cur + 1] = child
	cur.tags[#cur.tags + 1] = child
	local c = rawget(self, "_cursor")
	if not c then c = {}; rawset(self, "_cursor", c) end
	c[#c + 1] = child
	return self
end

function stanza_mt:text(s)
	if s ~= nil and s ~= "" then
		if type(s) ~= "string" then error("invalid text value: " .. type(s), 2) end
		local cur = cursor(self)
		cur[#cur + 1] = s
	end
	return self
end

function stanza_mt:up()
	local c = rawget(self, "_cursor")
	if c then c[#c] = nil end
	return self
end

function stanza_mt:top_tag() return cursor(self) end
function stanza_mt:reset() rawset(self, "_cursor", nil); return self end

function stanza_mt:add_direct_child(child)
	self[#self + 1] = child
	if st.is_stanza(child) then self.tags[#self.tags + 1] = child end
end

function stanza_mt:add_child(child)
	cursor(self):add_direct_child(child)
	return self
end

function stanza_mt:get_child(name, xmlns)
	for _, child in ipairs(self.tags) do
		if (not name or child.name == name)
			and (not xmlns or child.attr.xmlns == xmlns or (not child.attr.xmlns and xmlns == self.attr.xmlns)) then
			return child
		end
	end
end

function stanza_mt:child_with_name(name)
	for _, child in ipairs(self.tags) do
		if child.name == name then return child end
	end
end

function stanza_mt:get_text()
	if #self.tags == 0 then return table.concat(self) end
end

function stanza_mt:get_child_text(name, xmlns)
	local child = self:get_child(name, xmlns)
	if child then return child:get_text() end
end

function stanza_mt:childtags(name, xmlns)
	local i = 0
	return function()
		while true do
			i = i + 1
			local child = self.tags[i]
			if not child then return nil end
			if (not name or child.name == name) and (not xmlns or child.attr.xmlns == xmlns) then
				return child
			end
		end
	end
end

function stanza_mt:children()
	local i = 0
	return function()
		i = i + 1
		return self[i]
	end
end

local escapes = { ["<"] = "&lt;", [">"] = "&gt;", ["&"] = "&amp;", ["'"] = "&apos;", ['"'] = "&quot;" }
function st.xml_escape(s) return (s:gsub("[<>&'\"]", escapes)) end

local function serialize(s, out)
	out[#out + 1] = "<" .. s.name
	local keys = {}
	for k in pairs(s.attr) do keys[#keys + 1] = k end
	table.sort(keys)
	for _, k in ipairs(keys) do
		out[#out + 1] = " " .. k .. "='" .. st.xml_escape(tostring(s.attr[k])) .. "'"
	end
	if #s == 0 then
		out[#out + 1] = "/>"
		return
	end
	out[#out + 1] = ">"
	for _, child in ipairs(s) do
		if type(child) == "string" then
			out[#out + 1] = st.xml_escape(child)
		else
			serialize(child, out)
		end
	end
	out[#out + 1] = "</" .. s.name .. ">"
end

function stanza_mt.__tostring(s)
	local out = {}
	serialize(s, out)
	return table.concat(out)
end

function st.message(attr, body)
	local s = st.stanza("message", attr)
	if body then s:text_tag("body", body) end
	return s
end

function st.iq(attr) return st.stanza("iq", attr) end
function st.presence(attr) return st.stanza("presence", attr) end

function stanza_mt:text_tag(name, text, attr)
	return self:tag(name, attr):text(text):up()
end

function st.reply(orig)
	local a = orig.attr
	return st.stanza(orig.name, { to = a.from, from = a.to, id = a.id,
		type = orig.name == "iq" and "result" or a.type })
end
