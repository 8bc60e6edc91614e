//! The secret words of the 30 most spoken languages, beside the English
//! and European ones of [`super::lists`].
//!
//! # Which languages
//!
//! The 30 languages with the most speakers in total (first and second
//! language), in the order of Wikipedia's "List of languages by total
//! number of speakers" (Ethnologue 2023 figures): English, Mandarin
//! Chinese, Hindi, Spanish, French, Standard Arabic, Bengali, Portuguese,
//! Russian, Urdu, Indonesian, German, Japanese, Nigerian Pidgin, Egyptian
//! Arabic, Marathi, Telugu, Turkish, Tamil, Yue Chinese (Cantonese),
//! Vietnamese, Wu Chinese, Tagalog, Korean, Iranian Persian, Hausa,
//! Swahili, Javanese, Italian, Western Punjabi. The order was transcribed
//! from that article by the author on 2026-12-01 (the article could not be
//! fetched from the build machine); it decides only which languages are
//! covered, not how.
//!
//! # Where the words come from
//!
//! * **Transcribed from a package.** "Password", "backup code", "API key"
//!   and "verification code" (the labels `formFieldLabel__password`,
//!   `formFieldLabel__backupCode`, `formFieldLabel__apiKey` and
//!   `signIn.emailCode.formTitle`) of every locale that the npm package
//!   `@clerk/localizations` 4.18.0 (MIT) ships for these languages: ar-SA,
//!   bn-IN, de-DE, es-ES, fa-IR, fr-FR, hi-IN, id-ID, it-IT, ja-JP, ko-KR,
//!   ms-MY, pt-BR, pt-PT, ru-RU, ta-IN, te-IN, th-TH, tr-TR, vi-VN, zh-CN,
//!   zh-TW, plus the password of its other European locales. Marked
//!   `clerk` below.
//! * **Written by the author, not checked against a source.** The
//!   Wikidata labels of "password" (Q161157), "personal identification
//!   number", "one-time password", "card security code" and "private key"
//!   could not be reached from the build machine, and no package found
//!   ships them. Every other word here (PIN, one-time password, security
//!   code, private key in all languages, and all words of Urdu, Nigerian
//!   Pidgin, Marathi, Tagalog, Hausa, Swahili, Javanese and Punjabi) was
//!   written from the author's knowledge of the usual interface term on
//!   2026-12-01. Marked `author` below. Nigerian Pidgin, Tagalog and
//!   Javanese interfaces mostly use the English or Indonesian words, which
//!   the lists already hold; Wu and Yue are written with the Chinese
//!   characters of the Mandarin entries; Egyptian Arabic with those of
//!   Standard Arabic, plus its loan word.

/// Words and phrases matched as whole words, like [`super::lists::TERMS`].
pub(super) const TERMS: &[&str] = &[
    // Hindi (clerk: पासवर्ड, बैकअप कोड, API कुंजी, सत्यापन कोड; author:
    // the rest). Marathi writes the same पासवर्ड.
    "पासवर्ड",
    "बैकअप कोड",
    "api कुंजी",
    "सत्यापन कोड",
    "कूटशब्द",
    "निजी कुंजी",
    "गुप्त कुंजी",
    "ओटीपी",
    "सुरक्षा कोड",
    "पिन नंबर",
    "एटीएम पिन",
    "गुप्त कोड",
    // Marathi (author).
    "संकेतशब्द",
    "पडताळणी कोड",
    "खाजगी की",
    // Spanish and French additions (clerk).
    "código de respaldo",
    "clave api",
    "code de récupération",
    // Standard Arabic (clerk: كلمة المرور, الرمز الاحتياطي, مفتاح API,
    // رمز التحقق; author: the rest) and Egyptian Arabic (author: باسورد).
    "كلمة المرور",
    "كلمة مرور",
    "كلمة السر",
    "كلمات المرور",
    "الرمز الاحتياطي",
    "الرمز الأحتياطي",
    "مفتاح api",
    "رمز التحقق",
    "رمز تحقق",
    "المفتاح الخاص",
    "مفتاح خاص",
    "الرقم السري",
    "رمز الأمان",
    "رمز الامان",
    "باسورد",
    "الباسورد",
    // Bengali (clerk: পাসওয়ার্ড, ব্যাকআপ কোড, API কী, যাচাইকরণ কোড; author).
    "পাসওয়ার্ড",
    "ব্যাকআপ কোড",
    "api কী",
    "যাচাইকরণ কোড",
    "ব্যক্তিগত কী",
    "ওটিপি",
    "নিরাপত্তা কোড",
    "পিন নম্বর",
    // Portuguese additions (clerk).
    "código de backup",
    "chave api",
    "chave de api",
    // Russian additions (clerk).
    "код восстановления",
    "верификационный код",
    "api ключ",
    "код безопасности",
    "одноразовый код",
    // Urdu and Western Punjabi, Shahmukhi script (author).
    "پاس ورڈ",
    "پاسورڈ",
    "تصدیقی کوڈ",
    "نجی کلید",
    "خفیہ کوڈ",
    "سیکیورٹی کوڈ",
    "پن کوڈ",
    // Eastern Punjabi and Gujarati, beside the thirty (author).
    "ਪਾਸਵਰਡ",
    "પાસવર્ડ",
    // Indonesian (clerk: Kata sandi, Kode cadangan, Kunci API, Kode
    // verifikasi; author: the rest); Malay (clerk); Javanese (author).
    "kata sandi",
    "kode cadangan",
    "kunci api",
    "kode verifikasi",
    "kunci privat",
    "kunci pribadi",
    "kode keamanan",
    "kata laluan",
    "kod pengesahan",
    "kod sandaran",
    "tembung sandi",
    "tembung sandhi",
    // German additions (clerk).
    "wiederherstellungscode",
    // Nigerian Pidgin (author): the English words, and a common spelling.
    "pasword",
    "paswod",
    // Telugu (clerk: పాస్‌వర్డ్, బ్యాకప్ కోడ్, API కీ, ధృవీకరణ కోడ్; author).
    "పాస్‌వర్డ్",
    "పాస్వర్డ్",
    "బ్యాకప్ కోడ్",
    "api కీ",
    "ధృవీకరణ కోడ్",
    "ప్రైవేట్ కీ",
    "సంకేతపదం",
    "ఓటీపీ",
    // Turkish (clerk: Şifre, Yedekleme kodu, API anahtarı, Doğrulama
    // kodu; author: the rest; the password's cases are prefixes below).
    "parola",
    "yedekleme kodu",
    "api anahtarı",
    "doğrulama kodu",
    "özel anahtar",
    "gizli anahtar",
    "güvenlik kodu",
    "tek kullanımlık kod",
    // Tamil (clerk; author: the rest; the password is a prefix below).
    "சரிபார்ப்புக் குறியீடு",
    "சரிபார்ப்பு குறியீடு",
    "காப்புக் குறியீடு",
    "api விசை",
    "தனிப்பட்ட விசை",
    "பாதுகாப்புக் குறியீடு",
    // Vietnamese (clerk: Mật khẩu, Mã dự phòng, Khóa API, Mã xác minh;
    // author: the rest).
    "mật khẩu",
    "mã dự phòng",
    "khóa api",
    "mã xác minh",
    "mã xác thực",
    "khóa riêng tư",
    "khóa bí mật",
    "mã pin",
    "mã otp",
    "mã bảo mật",
    // Tagalog (author): the English words, and the Spanish loan.
    "kontrasenya",
    // Iranian Persian (clerk: رمز عبور, کد پشتیبان, کلید API, کد تأیید;
    // author: the rest).
    "رمز عبور",
    "کد پشتیبان",
    "کلید api",
    "کد تأیید",
    "کد تایید",
    "گذرواژه",
    "کلمه عبور",
    "کلید خصوصی",
    "کد امنیتی",
    "رمز یکبار مصرف",
    // Hausa (author).
    "kalmar sirri",
    "kalmar wucewa",
    "lambar sirri",
    "lambar tabbatarwa",
    "maɓallin sirri",
    // Swahili (author).
    "nenosiri",
    "nywila",
    "neno la siri",
    "namba ya siri",
    "nambari ya siri",
    "msimbo wa uthibitishaji",
    "msimbo wa usalama",
    "ufunguo wa siri",
    "ufunguo binafsi",
    // Italian additions (clerk; author: codice pin).
    "codice di backup",
    "chiave api",
    "codice pin",
    // The password of the package's other locales (clerk), where the word
    // means nothing else in another language.
    "heslo",
    "jelszó",
    "lozinka",
    "adgangskode",
    "passord",
    "lösenord",
    "salasana",
    "lykilorð",
    "парола",
    "κωδικός πρόσβασης",
    "סיסמה",
    "құпия сөз",
    "нууц үг",
];

/// Word beginnings that name a secret whatever ending a language adds.
pub(super) const PREFIXES: &[&str] = &[
    // Turkish "şifre": şifreniz, şifrenizi (author); "parola" cases.
    "şifre",
    "parolanız",
    "parolayı",
    "parolası",
    // Tamil கடவுச்சொல், கடவுச்சொல்லை (clerk, cases by the author).
    "கடவுச்சொல்",
    // Persian and Urdu with the Arabic article or a preposition attached.
    "بالباسورد",
];

/// Run-together terms, like [`super::lists::RUN_TOGETHER`]: Chinese,
/// Japanese, Korean and Thai write no spaces between words.
pub(super) const RUN_TOGETHER: &[&str] = &[
    // Mandarin (clerk: 密码, 备用代码, API密钥, 验证码; author: the rest).
    "备用代码",
    "api密钥",
    "一次性密码",
    "动态密码",
    "动态码",
    "校验码",
    "pin码",
    // Traditional characters, Yue and Taiwan Mandarin (clerk: 密碼, 備用碼,
    // 金鑰, 驗證碼; author: the rest).
    "備用碼",
    "金鑰",
    "一次性密碼",
    "保安編碼",
    "私人密碼匙",
    "pin碼",
    // Japanese (clerk: バックアップコード, APIキー, 検証コード; author).
    "バックアップコード",
    "apiキー",
    "検証コード",
    "ワンタイムコード",
    "プライベートキー",
    // Korean (clerk: 백업 코드, API 키, 인증 코드; author: 일회용).
    "백업코드",
    "api키",
    "일회용코드",
    "핀번호",
    "보안카드",
    // Thai (clerk: รหัสผ่าน, รหัสสำรอง, รหัสยืนยัน; author: the rest).
    "รหัสผ่าน",
    "รหัสสำรอง",
    "รหัสยืนยัน",
    "รหัสotp",
    "กุญแจส่วนตัว",
];
