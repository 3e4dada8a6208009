package io.neardup.parity;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader for parity documents sent as JSON text ({@code json.dumps} of a dict): objects become
 * {@code LinkedHashMap}, arrays {@code ArrayList}, integers {@code Long}, other numbers {@code Double}, plus
 * strings, booleans and null. The parity classes need no more, and the test classpath carries no JSON library of
 * its own beyond Elasticsearch's, which this keeps out of the comparison.
 */
public final class MiniJson {
    private final String text;
    private int at;

    private MiniJson(String text) {
        this.text = text;
    }

    /** The value of one JSON text. */
    public static Object parse(String text) {
        MiniJson reader = new MiniJson(text);
        Object value = reader.value();
        reader.space();
        if (reader.at != text.length()) {
            throw reader.error("trailing text");
        }
        return value;
    }

    /** A JSON text that must be an object. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> object(String text) {
        Object value = parse(text);
        if (value instanceof Map<?, ?> map) {
            return (Map<String, Object>) map;
        }
        throw new IllegalArgumentException("not a JSON object: " + text);
    }

    private Object value() {
        space();
        if (at >= text.length()) {
            throw error("a value expected");
        }
        char c = text.charAt(at);
        switch (c) {
            case '{' -> {
                return object();
            }
            case '[' -> {
                return array();
            }
            case '"' -> {
                return string();
            }
            case 't' -> {
                return word("true", Boolean.TRUE);
            }
            case 'f' -> {
                return word("false", Boolean.FALSE);
            }
            case 'n' -> {
                return word("null", null);
            }
            default -> {
                return number();
            }
        }
    }

    private Map<String, Object> object() {
        Map<String, Object> out = new LinkedHashMap<>();
        at++;
        space();
        if (peek() == '}') {
            at++;
            return out;
        }
        while (true) {
            space();
            if (peek() != '"') {
                throw error("a key expected");
            }
            String key = string();
            space();
            expect(':');
            out.put(key, value());
            space();
            if (peek() == ',') {
                at++;
            } else {
                expect('}');
                return out;
            }
        }
    }

    private List<Object> array() {
        List<Object> out = new ArrayList<>();
        at++;
        space();
        if (peek() == ']') {
            at++;
            return out;
        }
        while (true) {
            out.add(value());
            space();
            if (peek() == ',') {
                at++;
            } else {
                expect(']');
                return out;
            }
        }
    }

    private String string() {
        int start = at;
        at++;
        boolean escaped = false;
        while (at < text.length()) {
            char c = text.charAt(at);
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                at++;
                return Lines.decode(text.substring(start, at));
            }
            at++;
        }
        throw error("unterminated string");
    }

    private Object number() {
        int start = at;
        while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
        String digits = text.substring(start, at);
        if (digits.isEmpty()) {
            throw error("unexpected character");
        }
        try {
            if (digits.indexOf('.') < 0 && digits.indexOf('e') < 0 && digits.indexOf('E') < 0) {
                return Long.parseLong(digits);
            }
            return Double.parseDouble(digits);
        } catch (NumberFormatException e) {
            throw error("bad number " + digits);
        }
    }

    private Object word(String word, Object value) {
        if (text.startsWith(word, at) == false) {
            throw error("unexpected word");
        }
        at += word.length();
        return value;
    }

    private void expect(char c) {
        if (peek() != c) {
            throw error("'" + c + "' expected");
        }
        at++;
    }

    private char peek() {
        return at < text.length() ? text.charAt(at) : '\0';
    }

    private void space() {
        while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
            at++;
        }
    }

    private IllegalArgumentException error(String what) {
        int from = Math.max(0, at - 20);
        return new IllegalArgumentException(what + " at " + at + " of JSON text …" + text.substring(from, Math.min(text.length(), at + 20)) + "…");
    }
}
