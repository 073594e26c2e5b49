package images

import (
	"strings"
	"testing"
)

func TestSniff(t *testing.T) {
	cases := map[string]string{
		"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR": "image/png",
		"\xff\xd8\xff\xe0\x00\x10JFIF":        "image/jpeg",
		"GIF89a\x01\x00":                      "image/gif",
		"GIF87a\x01\x00":                      "image/gif",
		"RIFF\x24\x00\x00\x00WEBPVP8 ":        "image/webp",
		"RIFF\x24\x00\x00\x00WAVEfmt ":        "",
		"just text":                           "",
		"\x89PNX":                             "",
	}
	for in, want := range cases {
		if got := Sniff([]byte(in)); got != want {
			t.Errorf("Sniff(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	b, err := Check("image/jpeg", png)
	if err != nil || b.MIME != "image/png" {
		t.Errorf("a png claimed as jpeg: %v, %q (the bytes decide)", err, b.MIME)
	}
	for _, tc := range []struct {
		claimed string
		data    []byte
		want    string
	}{
		{"image/png", nil, "empty image"},
		{"text/plain", png, "not an image type"},
		{"image/png", []byte("hello, world"), "only png, jpeg, gif and webp"},
		{"image/png", make([]byte, MaxBytes+1), "over the"},
	} {
		if _, err := Check(tc.claimed, tc.data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%q, %d bytes) = %v, want %q", tc.claimed, len(tc.data), err, tc.want)
		}
	}
}

func TestDecodeBase64(t *testing.T) {
	for _, in := range []string{"aGk=", "aGk", "aGk=="} {
		if got, err := DecodeBase64(in); err != nil || string(got) != "hi" {
			t.Errorf("DecodeBase64(%q) = %q, %v", in, got, err)
		}
	}
	if got, err := DecodeBase64("-_8"); err != nil || len(got) != 2 {
		t.Errorf("URL-safe alphabet: %v, %v", got, err)
	}
	if _, err := DecodeBase64("not base64!"); err == nil || !strings.Contains(err.Error(), "not valid base64") {
		t.Errorf("garbage: %v", err)
	}
}
