// The JSON rule a replay's SigMF meta must pass before any key of it is read: the rule
// `rxnode analyze` reads a meta by (RFC 8259 JSON, as serde_json parses it). A meta
// analyze refuses is refused here too, naming where, never read in part by a laxer look:
// a byte order mark, text that is not UTF-8, a number JSON does not have (`0x1A`,
// `Infinity`, `NaN`, `+5`, `.5`, `05`: strtod reads them all) or one past the largest
// double (`1e999`, which serde_json refuses), a key named twice in one object (JSON
// readers disagree on which one wins), a syntax error, or text after the document.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>
#include <cstdlib>

namespace rxsim {

// A JSON value as parsed: the tree a replay reads each key from, at its place (the meta's
// "global" object, its "captures" list), as `rxnode analyze` reads it; a key elsewhere (in
// a capture segment, an annotation) is never taken for one of another place.
struct Json {
    enum Kind { Null, Bool, Number, String, Array, Object };
    Kind kind = Null;
    // A Number's value (strtod of the JSON number, which is one strtod reads alike).
    double num = 0.0;
    // A String's decoded text; a Number, true, false or null as written.
    std::string text;
    // An Array's elements, or an Object's values (their keys in `keys`, in the same order).
    std::vector<Json> items;
    std::vector<std::string> keys;
    // The value of `key` when this is an object that has it; else null.
    const Json *get(const std::string &key) const {
        if (kind != Object) return nullptr;
        for (size_t i = 0; i < keys.size(); i++)
            if (keys[i] == key) return &items[i];
        return nullptr;
    }
    // Whether this is a JSON number written as a whole number >= 0 (a count, as analyze
    // reads one: no sign, fraction or exponent).
    bool isCount() const {
        return kind == Number && !text.empty() &&
               text.find_first_not_of("0123456789") == std::string::npos;
    }
    // The value as a message shows it: a scalar as JSON writes it, else what it is.
    std::string shown() const {
        switch (kind) {
        case String: return "\"" + text + "\"";
        case Array: return "a list";
        case Object: return "an object";
        default: return text;
        }
    }
};

class JsonCheck {
  public:
    // Empty when `text` is one JSON object and nothing else; else what is wrong and where.
    static std::string check(const std::string &text) { return parse(text, nullptr); }
    // As check; when the text passes and `keep` names the root object's keys to keep, out
    // holds the document with those members (and only those: the rest, annotations among
    // them, are checked but not kept, so a large meta is not held twice).
    static std::string parse(const std::string &text, Json *out,
                             const std::vector<std::string> &keep = {}) {
        if (text.size() >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
            (unsigned char)text[2] == 0xBF)
            return "it starts with a UTF-8 byte order mark (BOM, the bytes EF BB BF): JSON has "
                   "none and the sigmf package refuses it too; save it as UTF-8 without a BOM";
        if (text.size() >= 2 && (((unsigned char)text[0] == 0xFF && (unsigned char)text[1] == 0xFE) ||
                                 ((unsigned char)text[0] == 0xFE && (unsigned char)text[1] == 0xFF)))
            return "it starts with a UTF-16 byte order mark: JSON is UTF-8; save it as UTF-8";
        size_t bad = utf8Error(text);
        if (bad != std::string::npos)
            return "it is not UTF-8 (invalid byte at offset " + std::to_string(bad) + ")";
        JsonCheck c(text);
        c.keep_ = &keep;
        c.ws();
        if (c.p_ >= text.size() || text[c.p_] != '{') return c.fail("the document is not a JSON object");
        if (!c.value("$", 0, "", out)) return c.err_;
        c.ws();
        if (c.p_ != text.size()) return c.fail("text after the JSON document");
        return "";
    }

  private:
    explicit JsonCheck(const std::string &t) : t_(t) {}
    const std::string &t_;
    const std::vector<std::string> *keep_ = nullptr;
    size_t p_ = 0;
    std::string err_;

    // The offset of the first byte that is not well-formed UTF-8, or npos.
    static size_t utf8Error(const std::string &s) {
        size_t i = 0;
        while (i < s.size()) {
            const unsigned char c = s[i];
            size_t n;
            uint32_t cp;
            if (c < 0x80) {
                i++;
                continue;
            } else if (c >= 0xC2 && c <= 0xDF) n = 1, cp = c & 0x1F;
            else if (c >= 0xE0 && c <= 0xEF) n = 2, cp = c & 0x0F;
            else if (c >= 0xF0 && c <= 0xF4) n = 3, cp = c & 0x07;
            else return i;
            for (size_t k = 1; k <= n; k++) {
                if (i + k >= s.size()) return i;
                const unsigned char d = s[i + k];
                if ((d & 0xC0) != 0x80) return i;
                cp = (cp << 6) | (d & 0x3F);
            }
            if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
                (cp >= 0xD800 && cp <= 0xDFFF))
                return i;
            i += n + 1;
        }
        return std::string::npos;
    }
    // The line and column (1-based, bytes) of offset p.
    std::string where(size_t p) const {
        size_t line = 1, col = 1;
        for (size_t i = 0; i < p && i < t_.size(); i++) {
            if (t_[i] == '\n') line++, col = 1;
            else col++;
        }
        return "line " + std::to_string(line) + " column " + std::to_string(col);
    }
    std::string fail(const std::string &why) {
        std::string shown = t_.substr(p_ < t_.size() ? p_ : t_.size(), 24);
        for (char &c : shown)
            if ((unsigned char)c < 0x20) c = ' ';
        err_ = "invalid JSON at " + where(p_) + ": " + why +
               (shown.empty() ? std::string(" (at the end)") : " (the text is `" + shown + "`)");
        return err_;
    }
    void ws() {
        while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r'))
            p_++;
    }
    bool lit(const char *w) {
        const std::string s(w);
        if (t_.compare(p_, s.size(), s) != 0) return false;
        p_ += s.size();
        return true;
    }
    static bool digit(char c) { return c >= '0' && c <= '9'; }
    // A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
    bool number() {
        const size_t start = p_;
        if (p_ < t_.size() && t_[p_] == '-') p_++;
        if (p_ < t_.size() && t_[p_] == '0') p_++;
        else if (p_ < t_.size() && digit(t_[p_]) && t_[p_] != '0')
            while (p_ < t_.size() && digit(t_[p_])) p_++;
        else return p_ = start, false;
        if (p_ < t_.size() && t_[p_] == '.') {
            p_++;
            if (!(p_ < t_.size() && digit(t_[p_]))) return p_ = start, false;
            while (p_ < t_.size() && digit(t_[p_])) p_++;
        }
        if (p_ < t_.size() && (t_[p_] == 'e' || t_[p_] == 'E')) {
            p_++;
            if (p_ < t_.size() && (t_[p_] == '+' || t_[p_] == '-')) p_++;
            if (!(p_ < t_.size() && digit(t_[p_]))) return p_ = start, false;
            while (p_ < t_.size() && digit(t_[p_])) p_++;
        }
        return true;
    }
    static int hex(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }
    bool hex4(uint32_t &u) {
        u = 0;
        for (int k = 0; k < 4; k++) {
            const int h = p_ < t_.size() ? hex(t_[p_]) : -1;
            if (h < 0) return false;
            u = u * 16 + uint32_t(h);
            p_++;
        }
        return true;
    }
    static void put(std::string &out, uint32_t cp) {
        if (cp < 0x80) out += char(cp);
        else if (cp < 0x800) out += char(0xC0 | (cp >> 6)), out += char(0x80 | (cp & 0x3F));
        else if (cp < 0x10000)
            out += char(0xE0 | (cp >> 12)), out += char(0x80 | ((cp >> 6) & 0x3F)),
                out += char(0x80 | (cp & 0x3F));
        else
            out += char(0xF0 | (cp >> 18)), out += char(0x80 | ((cp >> 12) & 0x3F)),
                out += char(0x80 | ((cp >> 6) & 0x3F)), out += char(0x80 | (cp & 0x3F));
    }
    // A string at p_ (its opening quote), decoded into out.
    bool str(std::string &out) {
        p_++;
        while (p_ < t_.size()) {
            const unsigned char c = t_[p_];
            if (c == '"') {
                p_++;
                return true;
            }
            if (c < 0x20) return fail("a control character inside a string"), false;
            if (c != '\\') {
                out += char(c);
                p_++;
                continue;
            }
            p_++;
            if (p_ >= t_.size()) break;
            const char e = t_[p_++];
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                uint32_t u;
                if (!hex4(u)) return fail("a \\u escape without four hex digits"), false;
                if (u >= 0xD800 && u <= 0xDBFF) {
                    uint32_t lo;
                    if (!(lit("\\u") && hex4(lo) && lo >= 0xDC00 && lo <= 0xDFFF))
                        return fail("a lone surrogate in a \\u escape"), false;
                    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                } else if (u >= 0xDC00 && u <= 0xDFFF)
                    return fail("a lone surrogate in a \\u escape"), false;
                put(out, u);
                break;
            }
            default: p_--; return fail("an escape JSON does not have"), false;
            }
        }
        return fail("a string that does not end"), false;
    }
    // The value at p_; `path` names it ($.global, $.captures[0]) and `key` the key it is of.
    // When out is not null, the value is built into it.
    bool value(const std::string &path, int depth, const std::string &key, Json *out) {
        if (depth > 128) return fail("nested deeper than 128 levels"), false;
        ws();
        if (p_ >= t_.size()) return fail("a value expected"), false;
        const char c = t_[p_];
        if (c == '{') {
            p_++;
            if (out != nullptr) out->kind = Json::Object;
            std::string keys = "\n"; // each key decoded, between newlines (a key may hold none raw)
            ws();
            if (p_ < t_.size() && t_[p_] == '}') return p_++, true;
            for (;;) {
                ws();
                if (p_ >= t_.size() || t_[p_] != '"') return fail("a key (a string) expected"), false;
                std::string k;
                if (!str(k)) return false;
                for (char &ch : k)
                    if (ch == '\n') ch = ' ';
                if (keys.find("\n" + k + "\n") != std::string::npos) {
                    err_ = k + " is named twice in " + path +
                           "; JSON readers disagree on which one wins";
                    return false;
                }
                keys += k + "\n";
                ws();
                if (p_ >= t_.size() || t_[p_] != ':') return fail("':' expected after a key"), false;
                p_++;
                Json *member = nullptr;
                if (out != nullptr && (depth > 0 || std::find(keep_->begin(), keep_->end(), k) !=
                                                        keep_->end())) {
                    out->keys.push_back(k);
                    out->items.emplace_back();
                    member = &out->items.back();
                }
                if (!value(path + "." + k, depth + 1, k, member)) return false;
                ws();
                if (p_ < t_.size() && t_[p_] == ',') {
                    p_++;
                    continue;
                }
                if (p_ < t_.size() && t_[p_] == '}') return p_++, true;
                return fail("',' or '}' expected"), false;
            }
        }
        if (c == '[') {
            p_++;
            if (out != nullptr) out->kind = Json::Array;
            ws();
            if (p_ < t_.size() && t_[p_] == ']') return p_++, true;
            for (size_t i = 0;; i++) {
                Json *item = nullptr;
                if (out != nullptr) {
                    out->items.emplace_back();
                    item = &out->items.back();
                }
                if (!value(path + "[" + std::to_string(i) + "]", depth + 1, key, item)) return false;
                ws();
                if (p_ < t_.size() && t_[p_] == ',') {
                    p_++;
                    continue;
                }
                if (p_ < t_.size() && t_[p_] == ']') return p_++, true;
                return fail("',' or ']' expected"), false;
            }
        }
        if (c == '"') {
            std::string s;
            if (!str(s)) return false;
            if (out != nullptr) out->kind = Json::String, out->text = std::move(s);
            return true;
        }
        const size_t start = p_;
        Json::Kind kind = Json::Null;
        if (lit("true") || lit("false")) kind = Json::Bool;
        else if (lit("null")) kind = Json::Null;
        else if (number()) kind = Json::Number;
        else p_ = start;
        if (kind == Json::Number &&
            !std::isfinite(std::strtod(t_.substr(start, p_ - start).c_str(), nullptr))) {
            // `1e999`: JSON, but past the largest double; analyze's reader refuses it.
            p_ = start;
            return fail((key.empty() ? std::string("the value") : "the value of \"" + key + "\"") +
                        " is a number out of range (past the largest double)"),
                   false;
        }
        if (p_ != start) {
            // `0x1A`, `1.5.2`, `nullx`: a JSON value with more after it is none.
            if (!(p_ < t_.size() && (std::isalnum((unsigned char)t_[p_]) || t_[p_] == '.' ||
                                     t_[p_] == '+' || t_[p_] == '-' || t_[p_] == '_'))) {
                if (out != nullptr) {
                    out->kind = kind;
                    out->text = t_.substr(start, p_ - start);
                    if (kind == Json::Number) out->num = std::strtod(out->text.c_str(), nullptr);
                    if (kind == Json::Bool) out->num = out->text == "true" ? 1.0 : 0.0;
                }
                return true;
            }
            p_ = start;
        }
        return fail((key.empty() ? std::string("the value") : "the value of \"" + key + "\"") +
                    " is not JSON (a number as JSON writes it, a string, true, false, null, "
                    "an object or an array; JSON has no hex, NaN or infinity)"),
               false;
    }
};

} // namespace rxsim
