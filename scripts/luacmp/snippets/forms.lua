-- A form handler: decode a urlencoded body, look fields up, answer JSON-ish text.
local function urldecode(s) return (s:gsub("+", " "):gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)) end
local function formdecode(s)
	local t = {}
	for k, v in s:gmatch("([^&=]+)=([^&]*)") do t[urldecode(k)] = urldecode(v) end
	return t
end
local body = "name=J%C3%BCrgen+Stein&email=js%40example.org&msg=Hello%2C+world%21+%3C3&tags=a%2Cb%2Cc&n=42"
local out, total = nil, 0
for i = 1, 20000 do
	local f = formdecode(body)
	out = string.format('{"name":%q,"email":%q,"n":%d,"len":%d}', f.name, f.email, tonumber(f.n) + i, #f.msg)
	total = total + #out
end
print(total, out)
